// Attack (memory before login). The MQTT parser keeps a packet's bytes until the whole packet is there, and
// a CONNECT may announce up to 256 MB: a client with no credential that sent such a header and streamed
// bytes slowly made the Core hold them all until the 30 s connect timeout (eight connections: 192 MB →
// 2.25 GB of RSS in 8 s). Defence: a connection whose first packet announces more than 64 KiB is closed as
// soon as its header is read, on TCP and on WebSocket; a real login, will included, is far smaller.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { MAX_FIRST_PACKET_BYTES } from '../../src/bus/first-packet-guard.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { ChildClient } from '../fixtures/bus/child-client.js';
import { makePluginsDir } from '../e2e/helpers.js';
import { freePort } from '../helpers/ports.js';

let core: TestCore;

beforeAll(async () => {
  core = await startTestCore({ pluginsDir: makePluginsDir({ shipped: [] }), overrides: { broker: { ws_port: await freePort() } } });
}, 120_000);

afterAll(async () => {
  await core?.cleanup();
});

/** A CONNECT fixed header announcing 268,435,455 bytes (the most MQTT allows), split over two writes. */
const HUGE_CONNECT_HEADER = [Buffer.from([0x10, 0xff, 0xff]), Buffer.from([0xff, 0x7f])];

function closed(socket: Socket | WebSocket): Promise<number> {
  const started = Date.now();
  return new Promise((resolve) => socket.once('close', () => resolve(Date.now() - started)));
}

describe('a first packet announcing more than a login needs', () => {
  it('closes a TCP connection at its header, while the client keeps streaming', async () => {
    const socket = connect(core.mqttPort!, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const ended = closed(socket);
    socket.on('error', () => undefined);
    for (const part of HUGE_CONNECT_HEADER) socket.write(part);
    const filler = Buffer.alloc(64 * 1024, 0x61);
    const streaming = setInterval(() => socket.writable && socket.write(filler), 5);
    try {
      // Well before the broker's 30 s connect timeout.
      expect(await ended).toBeLessThan(5000);
    } finally {
      clearInterval(streaming);
    }
  });

  it('closes a WebSocket connection the same way', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${core.wsPort}`, 'mqtt');
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const ended = closed(ws);
    for (const part of HUGE_CONNECT_HEADER) ws.send(part);
    expect(await ended).toBeLessThan(5000);
  });

  it('lets a real login in, will and all, and a first packet just under the limit is not cut', async () => {
    const client = new ChildClient({
      url: core.mqttUrl,
      clientId: 'big-will',
      will: {
        topic: 'homeclaw/plugins/status/big-will',
        payload: JSON.stringify({ state: 'offline', note: 'x'.repeat(MAX_FIRST_PACKET_BYTES - 1024) }),
        qos: 1,
        retain: false,
      },
    });
    await client.connected();
    await client.end();
  });
});
