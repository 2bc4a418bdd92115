// Core bus benchmark (issue 2): invoke round trip through the Core's dispatcher to an SDK plugin in
// another process, beside a baseline measured in the same run: a bare mqtt.js echo through a bare
// Aedes with TCP_NODELAY on both sides. Then the same through an external Mosquitto, and the Core's
// RSS per idle connected plugin with 1,000 plugins connected and heartbeating.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Aedes } from 'aedes';
import mqtt from 'mqtt';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log.js';
import { startCore, type RunningCore } from '../../src/main.js';
import { startMosquitto } from '../../test/helpers/mosquitto.js';
import { markdownTable, measure, ratio, type LatencyStats } from './stats.js';

const fixtures = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..', 'scripts', 'bench', 'fixtures');

function spawnReady(args: string[], timeoutMs = 120_000): Promise<{ child: ChildProcess; line: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} not ready in time`)), timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const line = buffer.split('\n').find((l) => l.startsWith('ready'));
      if (line) {
        clearTimeout(timer);
        resolve({ child, line });
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

/** Requests through a broker to the bare echo, correlated by id, QoS 1. */
async function bareRoundTrip(url: string, total: number, concurrency: number): Promise<LatencyStats> {
  const echo = await spawnReady([join(fixtures, 'bare-echo.mjs'), url]);
  const client = await mqtt.connectAsync(url, { protocolVersion: 4, clientId: `bench-requester-${process.pid}` });
  (client.stream as { setNoDelay?: (v: boolean) => void }).setNoDelay?.(true);
  await client.subscribeAsync('bench/res/+', { qos: 1 });
  const waiting = new Map<string, () => void>();
  client.on('message', (topic) => waiting.get(topic.slice('bench/res/'.length))?.());
  let next = 0;
  const op = () =>
    new Promise<void>((resolve) => {
      const id = String(next++);
      waiting.set(id, () => {
        waiting.delete(id);
        resolve();
      });
      client.publish(`bench/req/${id}`, JSON.stringify({ text: 'ping' }), { qos: 1 });
    });
  await measure(op, 200, 8); // warm-up
  const stats = await measure(op, total, concurrency);
  await client.endAsync(true);
  await stopChild(echo.child);
  return stats;
}

async function coreRoundTrip(core: RunningCore, url: string, total: number, concurrency: number): Promise<LatencyStats> {
  const plugin = await spawnReady([join(fixtures, 'echo-plugins.mjs'), url, '1']);
  const op = async (): Promise<void> => {
    const result = await core.ctx.dispatcher.invoke({ plugin_id: 'bench-echo-0', capability_id: 'echo', parameters: { text: 'ping' } });
    if (!result.success) throw new Error(`invoke failed: ${result.error}`);
  };
  await measure(op, 200, 8);
  const stats = await measure(op, total, concurrency);
  await stopChild(plugin.child);
  return stats;
}

function coreConfig(dataDir: string, brokerUrl?: string) {
  const loaded = loadConfig({
    env: {},
    overrides: {
      data_dir: dataDir,
      broker: { port: 0, ws_port: 0, ...(brokerUrl ? { url: brokerUrl } : {}) },
      http: { port: 0, admin_token: 'bench-admin-token-0123456789' },
      plugins: { dir: mkdtempSync(join(tmpdir(), 'bench-plugins-')), hot_reload: false },
      retrieval: { enabled: false },
      dispatch: { default_queue_limit: 10_000 },
    },
  });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  return loaded.config;
}

async function bareAedes(): Promise<{ url: string; close: () => Promise<void> }> {
  const broker = await Aedes.createBroker();
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    broker.handle(socket);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((r) => server.close(() => r()));
      await new Promise<void>((r) => broker.close(() => r()));
    },
  };
}

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

export async function runCoreBusBench(options: { total?: number; plugins?: number } = {}): Promise<string> {
  const total = options.total ?? 3000;
  const pluginCount = options.plugins ?? 1000;
  const rows: (string | number)[][] = [];
  const out: string[] = [];

  // 1. Embedded: bare Aedes baseline vs the Core.
  const bare = await bareAedes();
  const base1 = await bareRoundTrip(bare.url, total, 1);
  const base64 = await bareRoundTrip(bare.url, total, 64);
  await bare.close();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-core-'));
  const core = await startCore({ config: coreConfig(dataDir), log: silentLogger() });
  const coreUrl = `mqtt://127.0.0.1:${core.mqttPort}`;
  const core1 = await coreRoundTrip(core, coreUrl, total, 1);
  const core64 = await coreRoundTrip(core, coreUrl, total, 64);
  rows.push(
    ['embedded', 'baseline: bare Aedes + mqtt.js echo', 1, base1.p50, base1.p99, base1.throughput, '1.00x', '1.00x'],
    ['embedded', 'Core dispatcher -> SDK plugin', 1, core1.p50, core1.p99, core1.throughput, ratio(core1.p50, base1.p50), ratio(core1.throughput, base1.throughput)],
    ['embedded', 'baseline: bare Aedes + mqtt.js echo', 64, base64.p50, base64.p99, base64.throughput, '1.00x', '1.00x'],
    ['embedded', 'Core dispatcher -> SDK plugin', 64, core64.p50, core64.p99, core64.throughput, ratio(core64.p50, base64.p50), ratio(core64.throughput, base64.throughput)],
  );

  // 2. RSS per idle connected plugin on the embedded Core.
  gc();
  const rssBefore = process.memoryUsage().rss;
  const fleet = await spawnReady([join(fixtures, 'echo-plugins.mjs'), coreUrl, String(pluginCount), '5'], 300_000);
  await new Promise((r) => setTimeout(r, 6000)); // a full heartbeat round for every plugin
  gc();
  const rssAfter = process.memoryUsage().rss;
  const online = core.ctx.registry.list().filter((r) => r.state === 'online').length;
  const childRss = Number(fleet.line.split(' ')[1] ?? 0);
  await stopChild(fleet.child);
  await core.stop();
  rmSync(dataDir, { recursive: true, force: true });

  // 3. External Mosquitto: the same pair of measurements through it.
  // Mosquitto leaves Nagle on unless told otherwise; the README recommends the same line for users.
  const mosquitto = await startMosquitto({ extraConfig: 'set_tcp_nodelay true' });
  let external = 'Mosquitto not available';
  try {
    const mb1 = await bareRoundTrip(mosquitto.url, total, 1);
    const mb64 = await bareRoundTrip(mosquitto.url, total, 64);
    const extDir = mkdtempSync(join(tmpdir(), 'bench-core-ext-'));
    const extCore = await startCore({ config: coreConfig(extDir, mosquitto.url), log: silentLogger() });
    const mc1 = await coreRoundTrip(extCore, mosquitto.url, total, 1);
    const mc64 = await coreRoundTrip(extCore, mosquitto.url, total, 64);
    await extCore.stop();
    rmSync(extDir, { recursive: true, force: true });
    rows.push(
      ['mosquitto', 'baseline: mqtt.js requester + echo', 1, mb1.p50, mb1.p99, mb1.throughput, '1.00x', '1.00x'],
      ['mosquitto', 'Core (external mode) -> SDK plugin', 1, mc1.p50, mc1.p99, mc1.throughput, ratio(mc1.p50, mb1.p50), ratio(mc1.throughput, mb1.throughput)],
      ['mosquitto', 'baseline: mqtt.js requester + echo', 64, mb64.p50, mb64.p99, mb64.throughput, '1.00x', '1.00x'],
      ['mosquitto', 'Core (external mode) -> SDK plugin', 64, mc64.p50, mc64.p99, mc64.throughput, ratio(mc64.p50, mb64.p50), ratio(mc64.throughput, mb64.throughput)],
    );
    external = 'ok';
  } finally {
    await mosquitto.stop();
  }

  out.push(`### Core bus: invoke round trip (QoS 1, ${total} calls per row)`);
  out.push(markdownTable(['broker', 'path', 'concurrency', 'p50 ms', 'p99 ms', 'calls/s', 'p50 vs baseline', 'throughput vs baseline'], rows));
  out.push('');
  out.push(`Targets: Core p50 <= 1.3x baseline p50; throughput at 64 >= 0.8x baseline. External broker: ${external}.`);
  out.push('');
  out.push(`### Idle plugins: ${pluginCount} SDK plugins connected and heartbeating every 5 s`);
  out.push(
    markdownTable(
      ['plugins online', 'Core RSS before MB', 'Core RSS after MB', 'Core RSS per plugin KB', 'plugin process RSS per plugin KB'],
      [[online, rssBefore / 1048576, rssAfter / 1048576, (rssAfter - rssBefore) / 1024 / pluginCount, childRss / 1024 / pluginCount]],
    ),
  );
  return out.join('\n');
}
