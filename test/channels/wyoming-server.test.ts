// The Wyoming handle service on its own, with a recording engine: both framings, split and merged
// frames, identity and session from the context, and bad clients (malformed lines, oversized frames,
// floods, refused addresses) closing only their own connection.
import { afterEach, describe, expect, it } from 'vitest';
import { startWyomingServer, type WyomingServer, type WyomingSettings } from '../../src/channels/wyoming-server.js';
import type { UserMessage } from '../../src/conversation/engine.js';
import { silentLogger } from '../../src/log.js';
import type { ChannelMessageOut } from '../../src/protocol/types.js';
import { connectWyoming, frame, type WyomingTestClient } from '../helpers/wyoming-client.js';

const BASE: WyomingSettings = {
  port: 0,
  host: '127.0.0.1',
  user_id: 'household',
  users: { 'assist_satellite.kitchen': 'alice', '9f2c1d0e8b7a6f5e4d3c2b1a09f8e7d6': 'bob' },
  languages: ['en', 'de'],
  name: 'HomeClaw',
  supports_home_control: false,
  allow_from: [],
  max_line_bytes: 1024,
  max_data_bytes: 2048,
  max_payload_bytes: 4096,
  max_connections: 8,
  idle_timeout_sec: 300,
};

let server: WyomingServer | undefined;
const clients: WyomingTestClient[] = [];
let messages: UserMessage[] = [];
let release: (() => void) | undefined;

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await server?.stop();
  server = undefined;
  messages = [];
});

async function start(overrides: Partial<WyomingSettings> = {}): Promise<WyomingServer> {
  server = await startWyomingServer({
    settings: { ...BASE, ...overrides },
    log: silentLogger(),
    version: '9.9.9',
    engine: {
      async handleMessage(message): Promise<ChannelMessageOut> {
        messages.push(message);
        const base = { request_id: message.request_id ?? 'x', user_id: message.user_id, session_id: message.session_id ?? 'default' };
        if (message.text === 'wait') await new Promise<void>((resolve) => (release = resolve));
        if (message.text === 'fail') return { ...base, kind: 'error', text: 'The plugin buy is offline.' };
        return { ...base, kind: 'answer', text: `${message.user_id} said: ${message.text}` };
      },
    },
  });
  return server;
}

async function client(port = server!.port): Promise<WyomingTestClient> {
  const c = await connectWyoming(port);
  clients.push(c);
  return c;
}

describe('Wyoming handle service', () => {
  it('describe → info with one installed handle program, its model and languages', async () => {
    await start();
    const c = await client();
    c.send('describe');
    const info = await c.next();
    expect(info.type).toBe('info');
    expect(info.version).toBe('1.9.0');
    const handle = info.data.handle as Record<string, unknown>[];
    expect(handle).toHaveLength(1);
    expect(handle[0]).toMatchObject({
      name: 'HomeClaw',
      installed: true,
      version: '9.9.9',
      attribution: { name: 'HomeClaw Bus' },
      supports_handled_streaming: false,
      supports_home_control: false,
      models: [{ name: 'homeclaw', installed: true, languages: ['en', 'de'], attribution: { name: 'HomeClaw Bus' } }],
    });
    for (const other of ['asr', 'tts', 'intent', 'wake', 'mic', 'snd']) expect(info.data[other]).toEqual([]);
  });

  it('a transcript with its data in a separate block (as Home Assistant sends it) → handled with the answer and the context', async () => {
    await start();
    const c = await client();
    const context = { conversation_id: '01JABCDEF', satellite_id: 'assist_satellite.kitchen', device_id: 'abc' };
    c.send('transcript', { text: 'what time is it?', language: 'en', context }, 'block');
    const reply = await c.next();
    expect(reply).toMatchObject({ type: 'handled', data: { text: 'alice said: what time is it?', context } });
    expect(messages[0]).toMatchObject({ channel: 'wyoming', user_id: 'alice', session_id: '01JABCDEF', text: 'what time is it?' });
  });

  it('a transcript with inline data → handled; header data and a data block are merged, the block winning', async () => {
    await start();
    const c = await client();
    c.send('transcript', { text: 'hello inline' }, 'inline');
    expect(await c.next()).toMatchObject({ type: 'handled', data: { text: 'household said: hello inline' } });
    const block = Buffer.from(JSON.stringify({ text: 'from the block' }));
    c.sendRaw(
      Buffer.concat([
        Buffer.from(
          `${JSON.stringify({ type: 'transcript', data: { text: 'from the header', context: { conversation_id: 'c-7' } }, data_length: block.length })}\n`,
        ),
        block,
      ]),
    );
    expect(await c.next()).toMatchObject({ type: 'handled', data: { text: 'household said: from the block', context: { conversation_id: 'c-7' } } });
    expect(messages.map((m) => m.session_id)).toEqual(['default', 'c-7']);
  });

  it('frames split into single bytes and several frames in one write are both read', async () => {
    await start();
    const c = await client();
    const bytes = frame('transcript', { text: 'byte by byte' });
    for (const byte of bytes) c.sendRaw(Buffer.from([byte]));
    expect(await c.next()).toMatchObject({ type: 'handled', data: { text: 'household said: byte by byte' } });
    c.sendRaw(Buffer.concat([frame('ping', { text: 'p1' }), frame('describe'), frame('transcript', { text: 'third' }, 'inline')]));
    expect((await c.next()).type).toBe('pong');
    expect((await c.next()).type).toBe('info');
    expect(await c.next()).toMatchObject({ type: 'handled', data: { text: 'household said: third' } });
  });

  it('satellite → user, else device → user, else the default user; the conversation id is the session', async () => {
    await start();
    const c = await client();
    const say = async (context: Record<string, unknown>): Promise<UserMessage> => {
      c.send('transcript', { text: 'hi', context });
      await c.next();
      return messages[messages.length - 1]!;
    };
    expect(await say({ conversation_id: 'k1', satellite_id: 'assist_satellite.kitchen', device_id: '9f2c1d0e8b7a6f5e4d3c2b1a09f8e7d6' })).toMatchObject({
      user_id: 'alice',
      session_id: 'k1',
    });
    expect(await say({ conversation_id: 'b1', satellite_id: 'assist_satellite.office', device_id: '9f2c1d0e8b7a6f5e4d3c2b1a09f8e7d6' })).toMatchObject({
      user_id: 'bob',
      session_id: 'b1',
    });
    expect(await say({ conversation_id: 'h1', satellite_id: 'assist_satellite.garage' })).toMatchObject({ user_id: 'household', session_id: 'h1' });
    // Without a conversation id the satellite's turns still share one session.
    expect(await say({ satellite_id: 'assist_satellite.garage' })).toMatchObject({ user_id: 'household', session_id: 'satellite:assist_satellite.garage' });
    // A context naming a user does not choose the user: identities come from configuration only.
    expect(await say({ conversation_id: 'h2', user_id: 'alice', user: 'alice' })).toMatchObject({ user_id: 'household' });
  });

  it('an engine error → not-handled with the reason; a transcript without text → not-handled', async () => {
    await start();
    const c = await client();
    c.send('transcript', { text: 'fail', context: { conversation_id: 'z' } });
    expect(await c.next()).toMatchObject({ type: 'not-handled', data: { text: 'The plugin buy is offline.', context: { conversation_id: 'z' } } });
    c.send('transcript', { language: 'en' });
    expect(await c.next()).toMatchObject({ type: 'not-handled', data: { text: 'The transcript has no text.' } });
    c.send('transcript', { text: 42 }, 'inline');
    expect(await c.next()).toMatchObject({ type: 'not-handled' });
    expect(messages.map((m) => m.text)).toEqual(['fail']);
    // Unknown events are ignored and the connection keeps serving.
    c.send('audio-start', { rate: 16000, width: 2, channels: 1 });
    c.send('ping');
    expect((await c.next()).type).toBe('pong');
  });

  it('events of one connection are answered in order while other connections proceed', async () => {
    await start();
    const slow = await client();
    const fast = await client();
    slow.send('transcript', { text: 'wait' });
    slow.send('transcript', { text: 'after the wait' });
    await waitUntil(() => messages.length === 1);
    fast.send('transcript', { text: 'quick' });
    expect(await fast.next()).toMatchObject({ type: 'handled', data: { text: 'household said: quick' } });
    release!();
    expect(await slow.next()).toMatchObject({ data: { text: 'household said: wait' } });
    expect(await slow.next()).toMatchObject({ data: { text: 'household said: after the wait' } });
  });

  it('a client that half-closes right after its transcript still gets the answer, then the close', async () => {
    await start();
    const c = await client();
    c.send('transcript', { text: 'wait' });
    c.socket.end();
    await waitUntil(() => messages.length === 1);
    release!();
    expect(await c.next()).toMatchObject({ type: 'handled', data: { text: 'household said: wait' } });
    await c.closed;
  });

  it('a connection waiting for a slow answer is not closed as idle', async () => {
    await start({ idle_timeout_sec: 0.2 });
    const c = await client();
    c.send('transcript', { text: 'wait' });
    await waitUntil(() => messages.length === 1);
    await new Promise((r) => setTimeout(r, 700));
    expect(c.isClosed()).toBe(false);
    release!();
    expect(await c.next()).toMatchObject({ type: 'handled', data: { text: 'household said: wait' } });
    await c.closed; // idle again afterwards
  });

  it('payloads are skipped whole, also when split across writes', async () => {
    await start();
    const c = await client();
    const bytes = frame('audio-chunk', { rate: 16000, width: 2, channels: 1 }, 'block', Buffer.alloc(3000, 7));
    c.sendRaw(bytes.subarray(0, 100));
    c.sendRaw(Buffer.concat([bytes.subarray(100), frame('ping', { text: 'after audio' })]));
    expect(await c.next()).toMatchObject({ type: 'pong', data: { text: 'after audio' } });
  });
});

describe('bad clients close only their own connection', () => {
  const cases: { name: string; bytes: () => Buffer; code: string; reason: RegExp }[] = [
    { name: 'a line that is not JSON', bytes: () => Buffer.from('hello there\n'), code: 'malformed-frame', reason: /not JSON/ },
    { name: 'a header that is not an object', bytes: () => Buffer.from('[1,2,3]\n'), code: 'malformed-frame', reason: /JSON object/ },
    { name: 'a header without a type', bytes: () => Buffer.from('{"data":{"text":"hi"}}\n'), code: 'malformed-frame', reason: /"type"/ },
    { name: 'data that is not an object', bytes: () => Buffer.from('{"type":"transcript","data":"hi"}\n'), code: 'malformed-frame', reason: /"data"/ },
    { name: 'a negative data_length', bytes: () => Buffer.from('{"type":"transcript","data_length":-4}\n'), code: 'malformed-frame', reason: /data_length/ },
    {
      name: 'a data block that is not JSON',
      bytes: () => Buffer.from('{"type":"transcript","data_length":5}\nhello'),
      code: 'malformed-frame',
      reason: /data block is not JSON/,
    },
    {
      name: 'a header line over max_line_bytes',
      bytes: () => Buffer.from(`{"type":"transcript","data":{"text":"${'a'.repeat(2000)}"}}\n`),
      code: 'frame-too-large',
      reason: /header line exceeds 1024/,
    },
    { name: 'an endless line without a newline', bytes: () => Buffer.alloc(5000, 0x61), code: 'frame-too-large', reason: /header line exceeds 1024/ },
    {
      name: 'a data_length over max_data_bytes',
      bytes: () => Buffer.from('{"type":"transcript","data_length":999999}\n'),
      code: 'frame-too-large',
      reason: /data_length.*limit is 2048/,
    },
    {
      name: 'a payload_length over max_payload_bytes',
      bytes: () => Buffer.from('{"type":"audio-chunk","payload_length":99999}\n'),
      code: 'frame-too-large',
      reason: /payload_length.*limit is 4096/,
    },
  ];

  for (const { name, bytes, code, reason } of cases) {
    it(`${name} → an error event, that connection closed, the others still served`, async () => {
      await start();
      const bystander = await client();
      const bad = await client();
      bad.sendRaw(bytes());
      const error = await bad.next();
      expect(error.type).toBe('error');
      expect(error.data.code).toBe(code);
      expect(String(error.data.text)).toMatch(reason);
      await bad.closed;
      bystander.send('transcript', { text: 'still here' });
      expect(await bystander.next()).toMatchObject({ type: 'handled', data: { text: 'household said: still here' } });
      const newcomer = await client();
      newcomer.send('describe');
      expect((await newcomer.next()).type).toBe('info');
      expect(messages.map((m) => m.text)).toEqual(['still here']);
    });
  }

  it('events after a bad frame in the same write are not handled', async () => {
    await start();
    const c = await client();
    c.sendRaw(Buffer.concat([Buffer.from('garbage\n'), frame('transcript', { text: 'smuggled' })]));
    expect((await c.next()).type).toBe('error');
    await c.closed;
    expect(messages).toEqual([]);
  });

  it('a client pipelining too many events is closed', async () => {
    await start();
    const c = await client();
    const flood = Buffer.concat(Array.from({ length: 40 }, (_, i) => frame('transcript', { text: i === 0 ? 'wait' : `n${i}` })));
    c.sendRaw(flood);
    const first = await c.next();
    expect(first).toMatchObject({ type: 'error', data: { code: 'too-many-events' } });
    await c.closed;
    release?.();
  });

  it('addresses outside wyoming.allow_from are refused; listed ones are served', async () => {
    await start({ allow_from: ['10.20.30.40'] });
    const refused = await client();
    refused.send('describe');
    await refused.closed;
    await server!.stop();
    await start({ allow_from: ['::ffff:127.0.0.1'] });
    const served = await client();
    served.send('describe');
    expect((await served.next()).type).toBe('info');
  });

  it('a port already in use is a clear start error', async () => {
    const first = await start();
    await expect(
      startWyomingServer({
        settings: { ...BASE, port: first.port },
        engine: {
          handleMessage: async () => {
            throw new Error('unused');
          },
        },
        log: silentLogger(),
        version: '1',
      }),
    ).rejects.toThrow(new RegExp(`Wyoming: cannot listen on 127.0.0.1:${first.port}: .*EADDRINUSE`));
  });

  it('connections beyond max_connections get an error and are closed; idle connections time out', async () => {
    await start({ max_connections: 2, idle_timeout_sec: 0.5 });
    const a = await client();
    const b = await client();
    const third = await client();
    expect(await third.next()).toMatchObject({ type: 'error', data: { code: 'busy' } });
    await third.closed;
    // Both stay silent: the server closes them after 0.5 s, and then has room again.
    await Promise.all([a.closed, b.closed]);
    await waitUntil(() => server!.connectionCount() === 0);
    const later = await client();
    later.send('describe');
    expect((await later.next()).type).toBe('info');
  });
});

async function waitUntil(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
