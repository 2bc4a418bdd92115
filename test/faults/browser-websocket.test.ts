// Attack (cross-site WebSocket hijacking): browsers let any web page open a WebSocket to any address,
// loopback included, with no CORS check. A page the user merely visited connected to the embedded
// broker's MQTT-over-WebSocket listener on 127.0.0.1 and, since anonymous loopback clients may do
// anything (the default development setup), could have called plugins as any user and read every
// message. Defence: a WebSocket upgrade that carries a browser's Origin header is refused unless that
// origin is listed in broker.ws_allowed_origins; clients that send no Origin (MQTT libraries) connect.
// Run in a real Chromium against the real Core.
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../scripts/browser/chromium.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { freePort } from '../helpers/ports.js';
import { ChildClient } from '../fixtures/bus/child-client.js';

const run = promisify(execFile);

/** A page that opens an MQTT session over WebSocket to the Core and reports what happened. */
function pageFor(wsPort: number): string {
  return `<!doctype html><title>cute cats</title><script>
  // MQTT 3.1.1 CONNECT, clean session, client id "evil", no login.
  const connect = new Uint8Array([0x10, 0x10, 0x00, 0x04, 0x4d, 0x51, 0x54, 0x54, 0x04, 0x02, 0x00, 0x3c, 0x00, 0x04, 0x65, 0x76, 0x69, 0x6c]);
  const ws = new WebSocket('ws://127.0.0.1:${wsPort}', 'mqtt');
  ws.binaryType = 'arraybuffer';
  ws.onopen = () => ws.send(connect);
  // The broker may split its CONNACK over several frames.
  const received = [];
  ws.onmessage = (event) => {
    received.push(...new Uint8Array(event.data));
    if (received.length >= 4 && window.outcome === undefined) window.outcome = received[0] === 0x20 ? 'connack ' + received[3] : 'other ' + received.join(',');
  };
  ws.onclose = () => { window.outcome ??= 'refused'; };
  </script>`;
}

/** Serves the attack page from an origin of its own, as any web site would. */
async function servePage(html: string, port = 0): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = http.createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(html));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${bound}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Connects with the real paho-mqtt over WebSocket (it sends Origin: https://<host>:<port>); its CONNACK code. */
async function pahoOverWebSocket(wsPort: number): Promise<string> {
  const script = `
import sys, threading, paho.mqtt.client as mqtt
done = threading.Event()
result = {}
def on_connect(client, userdata, flags, rc, *rest):
    result['rc'] = getattr(rc, 'value', rc)
    done.set()
client = mqtt.Client(client_id='paho-over-ws', transport='websockets')
client.on_connect = on_connect
client.connect('127.0.0.1', int(sys.argv[1]))
client.loop_start()
done.wait(10)
client.loop_stop()
print('connack %s' % result.get('rc', 'none'))
`;
  const { stdout } = await run('/usr/bin/python3', ['-c', script, String(wsPort)], { timeout: 20_000 });
  return stdout.trim();
}

let browser: Browser;
let core: TestCore | undefined;

async function outcomeOf(origin: string): Promise<string> {
  const page = await browser.newPage();
  try {
    await page.goto(origin);
    await page.waitForFunction(() => (globalThis as { outcome?: string }).outcome !== undefined, undefined, { timeout: 10_000 });
    return await page.evaluate(() => (globalThis as { outcome?: string }).outcome ?? '');
  } finally {
    await page.close();
  }
}

beforeAll(async () => {
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await core?.cleanup();
  await browser?.close();
});

describe('MQTT over WebSocket from a web page', () => {
  it('a page from any origin is refused; an MQTT library (no Origin) still connects', async () => {
    const wsPort = await freePort();
    core = await startTestCore({ overrides: { broker: { ws_port: wsPort } } });
    const site = await servePage(pageFor(wsPort));
    try {
      expect(await outcomeOf(site.origin)).toBe('refused');
    } finally {
      await site.close();
    }
    const library = new ChildClient({ url: `ws://127.0.0.1:${wsPort}`, clientId: 'node-over-ws' });
    await library.connected();
    await library.end();
    // paho-mqtt names the broker's own address as its origin: still a library, not a page.
    expect(await pahoOverWebSocket(wsPort)).toBe('connack 0');
    await core.cleanup();
    core = undefined;
  });

  it('a page from an origin listed in broker.ws_allowed_origins connects', async () => {
    const wsPort = await freePort();
    const sitePort = await freePort();
    core = await startTestCore({ overrides: { broker: { ws_port: wsPort, ws_allowed_origins: [`http://127.0.0.1:${sitePort}`] } } });
    const site = await servePage(pageFor(wsPort), sitePort);
    try {
      expect(await outcomeOf(site.origin)).toBe('connack 0');
    } finally {
      await site.close();
    }
  });
});
