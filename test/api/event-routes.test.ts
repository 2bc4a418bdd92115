// The event stream route on its own, against a feed the test drives: a disconnected client is
// unsubscribed, a client that stops reading is cut off instead of buffering without bound, and a quiet
// stream gets keep-alive comments.
import { connect } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { FeedEvent } from '../../src/api/event-feed.js';
import { registerEventRoutes } from '../../src/api/routes/events.js';
import { silentLogger } from '../../src/log.js';
import { openSse } from '../helpers/sse-client.js';

class TestFeed {
  readonly listeners = new Set<(event: FeedEvent) => void>();
  unsubscribed = 0;
  subscribe(listener: (event: FeedEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      if (this.listeners.delete(listener)) this.unsubscribed++;
    };
  }
  emit(event: FeedEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within 20 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function serve(feed: TestFeed, options: { heartbeat_ms?: number; max_buffered_bytes?: number } = {}): Promise<string> {
  // fetch keeps a spare idle connection after an abort; the test's server does not wait for it.
  app = Fastify({ forceCloseConnections: true });
  registerEventRoutes(app, { feed, log: silentLogger(), ...options });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/api/events`;
}

describe('registerEventRoutes', () => {
  it('unsubscribes a client that disconnects', async () => {
    const feed = new TestFeed();
    const url = await serve(feed);
    const client = await openSse(url, {});
    await client.waitFor((m) => m.event === 'ready');
    feed.emit({ kind: 'registry', json: '{"type":"plugin.registered","plugin_id":"a"}' });
    expect(JSON.parse((await client.waitFor((m) => m.event === 'registry')).data)).toEqual({ type: 'plugin.registered', plugin_id: 'a' });
    client.close();
    await client.ended;
    // A browser tab that closes drops its connection: the server must let go of its subscription.
    const raw = new URL(url);
    const socket = connect(Number(raw.port), raw.hostname);
    socket.write(`GET ${raw.pathname} HTTP/1.1\r\nHost: ${raw.host}\r\n\r\n`);
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    await until(() => received.includes('event: ready'), 'the ready event');
    const before = feed.unsubscribed;
    expect(feed.listeners.size).toBeGreaterThanOrEqual(1);
    socket.destroy();
    await until(() => feed.unsubscribed === before + 1, 'the unsubscription');
  });

  it('cuts off a client that stops reading', async () => {
    const feed = new TestFeed();
    const url = new URL(await serve(feed, { max_buffered_bytes: 256 * 1024 }));
    // A raw socket that sends the request and then never reads: the kernel buffers fill, then Node's.
    const socket = connect(Number(url.port), url.hostname);
    socket.write(`GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
    socket.pause();
    await until(() => feed.listeners.size === 1, 'the subscription');
    const big = JSON.stringify({ type: 'invocation.finished', padding: 'x'.repeat(64 * 1024) });
    for (let i = 0; i < 2000 && feed.listeners.size > 0; i++) feed.emit({ kind: 'invocation', json: big });
    expect(feed.listeners.size).toBe(0);
    expect(feed.unsubscribed).toBe(1);
    socket.destroy();
  });

  it('sends keep-alive comments on a quiet stream', async () => {
    const feed = new TestFeed();
    const url = await serve(feed, { heartbeat_ms: 50 });
    const response = await fetch(url);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes(': keep-alive')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(text).toMatch(/^retry: \d+\nevent: ready\ndata: \{\}\n\n/);
    expect(text).toContain(': keep-alive\n\n');
    await reader.cancel();
  });
});
