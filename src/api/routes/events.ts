// GET /api/events (admin): the observer event feed of homeclaw/events/<kind> as server-sent events, for
// browsers, which cannot speak MQTT here. Each event is `event: <kind>` (registry | invocation) with the
// same JSON as on MQTT in `data:`. The stream opens with `event: ready` once the subscription is live, so
// a client that loads its state after `ready` misses nothing; there is no replay, so a client that
// reconnects loads its state again. A comment line every heartbeat keeps proxies from closing an idle
// stream. A client that stops reading is disconnected instead of buffering without bound.
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Logger } from '../../log.js';
import type { EventFeed } from '../event-feed.js';

export interface EventRoutesDeps {
  feed: Pick<EventFeed, 'subscribe'>;
  log: Logger;
  /** Interval of the keep-alive comment; default 25 s (under the usual 30-60 s proxy idle timeouts). */
  heartbeat_ms?: number;
  /** Bytes a slow client may leave unread before it is disconnected; default 1 MiB. */
  max_buffered_bytes?: number;
}

/** How long a browser waits before reconnecting after the stream ends (the SSE `retry` field). */
export const EVENT_STREAM_RETRY_MS = 2000;

export function registerEventRoutes(app: FastifyInstance, deps: EventRoutesDeps): void {
  const open = new Set<ServerResponse>();
  const heartbeatMs = deps.heartbeat_ms ?? 25_000;
  const maxBuffered = deps.max_buffered_bytes ?? 1024 * 1024;

  // Streams never end by themselves: without this, closing the server would wait for every browser tab.
  app.addHook('preClose', async () => {
    for (const res of open) res.end();
    open.clear();
  });

  // HEAD would run the handler and hold the connection open with nothing to say.
  app.get('/api/events', { exposeHeadRoute: false }, (request, reply) => {
    const res = reply.raw;
    reply.hijack();
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      // The connection carries this stream only: when the stream ends (the Core stops, the client is cut
      // off) the socket closes with it, so stopping the server never waits for an idle browser connection.
      connection: 'close',
      // Reverse proxies (nginx, Home Assistant's ingress) must pass each event on at once.
      'x-accel-buffering': 'no',
    });
    res.socket?.setNoDelay(true);
    open.add(res);
    let closed = false;
    const close = (): void => {
      if (closed) return;
      closed = true;
      unsubscribe();
      clearInterval(heartbeat);
      open.delete(res);
      if (!res.writableEnded) res.end();
    };
    const send = (text: string): void => {
      if (closed) return;
      if (res.writableLength > maxBuffered) {
        deps.log.warn({ ip: request.ip, buffered: res.writableLength }, 'event stream client is not reading; disconnected');
        close();
        return;
      }
      res.write(text);
    };
    const unsubscribe = deps.feed.subscribe((event) => send(`event: ${event.kind}\ndata: ${event.json}\n\n`));
    const heartbeat = setInterval(() => send(': keep-alive\n\n'), heartbeatMs);
    heartbeat.unref();
    res.on('close', close);
    res.on('error', close);
    send(`retry: ${EVENT_STREAM_RETRY_MS}\nevent: ready\ndata: {}\n\n`);
  });
}
