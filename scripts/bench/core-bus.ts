// Core bus benchmark: invoke round trip through the Core's dispatcher to an SDK plugin in
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
import { markdownTable, measure, measurePair, ratio } from './stats.js';

const fixtures = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..', 'scripts', 'bench', 'fixtures');

export function spawnReady(args: string[], timeoutMs = 120_000): Promise<{ child: ChildProcess; line: string }> {
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

export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

export interface Path {
  op: () => Promise<void>;
  close: () => Promise<void>;
}

/** Requests through a broker to the bare echo (another process), correlated by id, QoS 1. */
async function barePath(url: string): Promise<Path> {
  const echo = await spawnReady([join(fixtures, 'bare-echo.mjs'), url]);
  const client = await mqtt.connectAsync(url, { protocolVersion: 4, clientId: `bench-requester-${process.pid}-${Date.now()}` });
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
  return {
    op,
    close: async () => {
      await client.endAsync(true);
      await stopChild(echo.child);
    },
  };
}

/** The Core's dispatcher invoking an SDK echo plugin in another process. */
export async function corePath(core: RunningCore, url: string): Promise<Path> {
  const plugin = await spawnReady([join(fixtures, 'echo-plugins.mjs'), url, '1']);
  const op = async (): Promise<void> => {
    const result = await core.ctx.dispatcher.invoke({ plugin_id: 'bench-echo-0', capability_id: 'echo', parameters: { text: 'ping' } });
    if (!result.success) throw new Error(`invoke failed: ${result.error}`);
  };
  return { op, close: () => stopChild(plugin.child) };
}

/** Warms both paths up, then measures them in alternating blocks at concurrency 1 and 64. */
/** The targets every Core path is held to, against the baseline measured beside it. */
const P50_TARGET = 1.3;
const THROUGHPUT_TARGET = 0.8;

async function comparePaths(
  label: string,
  baselineName: string,
  coreName: string,
  base: Path,
  candidate: Path,
  total: number,
  verdicts: string[],
): Promise<(string | number)[][]> {
  await measure(base.op, 300, 8);
  await measure(candidate.op, 300, 8);
  const rows: (string | number)[][] = [];
  const ratios = new Map<number, { p50: number; throughput: number }>();
  for (const concurrency of [1, 64]) {
    const { baseline: b, candidate: c } = await measurePair(base.op, candidate.op, total, concurrency);
    ratios.set(concurrency, { p50: c.p50 / b.p50, throughput: c.throughput / b.throughput });
    rows.push(
      [label, baselineName, concurrency, b.p50, b.p99, b.throughput, '1.00x', '1.00x'],
      [label, coreName, concurrency, c.p50, c.p99, c.throughput, ratio(c.p50, b.p50), ratio(c.throughput, b.throughput)],
    );
  }
  const p50 = ratios.get(1)!.p50;
  const throughput = ratios.get(64)!.throughput;
  const met = (ok: boolean): string => (ok ? 'met' : 'NOT met');
  verdicts.push(
    `- ${label}, ${coreName}: p50 at concurrency 1 ${p50.toFixed(2)}x (${met(p50 <= P50_TARGET)}), throughput at 64 ${throughput.toFixed(2)}x (${met(throughput >= THROUGHPUT_TARGET)})`,
  );
  return rows;
}

export function coreConfig(dataDir: string, brokerUrl?: string, extra: Record<string, unknown> = {}, protocolVersion: 5 | '3.1.1' = 5) {
  const loaded = loadConfig({
    env: {},
    overrides: {
      data_dir: dataDir,
      broker: { port: 0, ws_port: 0, ...(brokerUrl ? { url: brokerUrl, protocol_version: protocolVersion } : {}) },
      http: { port: 0, admin_token: 'bench-admin-token-0123456789' },
      plugins: { dir: mkdtempSync(join(tmpdir(), 'bench-plugins-')), hot_reload: false },
      retrieval: { enabled: false },
      dispatch: { default_queue_limit: 10_000 },
      ...extra,
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

/** Two collections with a pause, so RSS reflects live memory. */
async function settle(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  await new Promise((r) => setTimeout(r, 500));
  gc?.();
}

export async function runCoreBusBench(options: { total?: number; plugins?: number; rss?: boolean } = {}): Promise<string> {
  const total = options.total ?? 6000;
  const pluginCount = options.plugins ?? 1000;
  const rows: (string | number)[][] = [];
  const cpuRows: (string | number)[][] = [];
  const verdicts: string[] = [];
  const out: string[] = [];

  // 0. RSS per idle connected plugin, first, on a fresh Core (later runs leave garbage that skews RSS).
  let rss: { online: number; before: number; after: number; childRss: number } | undefined;
  if (options.rss !== false) rss = await measureIdleRss(pluginCount);

  // 1. Embedded: bare Aedes baseline vs the Core, measured in alternating blocks.
  const bare = await bareAedes();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-core-'));
  const core = await startCore({ config: coreConfig(dataDir), log: silentLogger() });
  const coreUrl = `mqtt://127.0.0.1:${core.mqttPort}`;
  const basePath = await barePath(bare.url);
  const embeddedCore = await corePath(core, coreUrl);
  rows.push(
    ...(await comparePaths('embedded', 'baseline: bare Aedes + mqtt.js echo', 'Core dispatcher -> SDK plugin', basePath, embeddedCore, total, verdicts)),
  );
  await embeddedCore.close();
  await basePath.close();
  await bare.close();
  await core.stop();
  rmSync(dataDir, { recursive: true, force: true });

  // 2. External Mosquitto: the same pair of measurements through it.
  // Mosquitto leaves Nagle on unless told otherwise; the README recommends the same line for users.
  const mosquitto = await startMosquitto({ extraConfig: 'set_tcp_nodelay true' });
  let external = 'not measured (Mosquitto not available)';
  try {
    const extDir = mkdtempSync(join(tmpdir(), 'bench-core-ext-'));
    const extCore = await startCore({ config: coreConfig(extDir, mosquitto.url), log: silentLogger() });
    const mBase = await barePath(mosquitto.url);
    const mCore = await corePath(extCore, mosquitto.url);
    rows.push(
      ...(await comparePaths('mosquitto', 'baseline: mqtt.js requester + echo', 'Core (external mode, MQTT 5) -> SDK plugin', mBase, mCore, total, verdicts)),
    );
    cpuRows.push(['baseline: mqtt.js requester', await cpuPerCall(mBase.op, total)], ['Core (external mode, MQTT 5)', await cpuPerCall(mCore.op, total)]);
    await mCore.close();
    await extCore.stop();
    rmSync(extDir, { recursive: true, force: true });
    // The same Core speaking 3.1.1 to the broker: what MQTT 5 (expiry, traceparent, reason codes) costs.
    const oldDir = mkdtempSync(join(tmpdir(), 'bench-core-ext311-'));
    const oldCore = await startCore({ config: coreConfig(oldDir, mosquitto.url, {}, '3.1.1'), log: silentLogger() });
    const oldPath = await corePath(oldCore, mosquitto.url);
    rows.push(
      ...(await comparePaths(
        'mosquitto',
        'baseline: mqtt.js requester + echo',
        'Core (external mode, MQTT 3.1.1) -> SDK plugin',
        mBase,
        oldPath,
        total,
        verdicts,
      )),
    );
    cpuRows.push(['Core (external mode, MQTT 3.1.1)', await cpuPerCall(oldPath.op, total)]);
    await oldPath.close();
    await mBase.close();
    await oldCore.stop();
    rmSync(oldDir, { recursive: true, force: true });
    external = 'measured';
  } finally {
    await mosquitto.stop();
  }

  out.push(`### Core bus: invoke round trip (QoS 1, ${total} calls per row)`);
  out.push(markdownTable(['broker', 'path', 'concurrency', 'p50 ms', 'p99 ms', 'calls/s', 'p50 vs baseline', 'throughput vs baseline'], rows));
  out.push('');
  out.push(
    `Targets: Core p50 <= ${P50_TARGET}x baseline p50 at concurrency 1; throughput at 64 >= ${THROUGHPUT_TARGET}x baseline. External broker: ${external}.`,
  );
  out.push('');
  out.push(...verdicts);
  out.push('');
  if (cpuRows.length > 0) {
    out.push(`### CPU of this process per call through Mosquitto (concurrency 64, ${total} calls): the requester, or the whole Core`);
    out.push(markdownTable(['path', 'CPU us per call'], cpuRows));
    out.push('');
  }
  if (rss) {
    out.push(`### Idle plugins: ${pluginCount} SDK plugins connected and heartbeating every 5 s`);
    out.push(
      markdownTable(
        ['plugins online', 'Core RSS before MB', 'Core RSS after MB', 'Core RSS per plugin KB', 'plugin process RSS per plugin KB'],
        [[rss.online, rss.before / 1048576, rss.after / 1048576, (rss.after - rss.before) / 1024 / pluginCount, rss.childRss / 1024 / pluginCount]],
      ),
    );
  }
  return out.join('\n');
}

/** The Core's RSS before and after `pluginCount` SDK plugins connect and heartbeat every 5 s. */
async function measureIdleRss(pluginCount: number): Promise<{ online: number; before: number; after: number; childRss: number }> {
  const rssDir = mkdtempSync(join(tmpdir(), 'bench-core-rss-'));
  const rssCore = await startCore({ config: coreConfig(rssDir), log: silentLogger() });
  await settle();
  const rssBefore = process.memoryUsage().rss;
  const fleet = await spawnReady([join(fixtures, 'echo-plugins.mjs'), `mqtt://127.0.0.1:${rssCore.mqttPort}`, String(pluginCount), '5'], 300_000);
  await new Promise((r) => setTimeout(r, 6000)); // a full heartbeat round for every plugin
  await settle();
  const rssAfter = process.memoryUsage().rss;
  const online = rssCore.ctx.registry.list().filter((r) => r.state === 'online').length;
  const childRss = Number(fleet.line.split(' ')[1] ?? 0);
  await stopChild(fleet.child);
  await rssCore.stop();
  rmSync(rssDir, { recursive: true, force: true });
  return { online, before: rssBefore, after: rssAfter, childRss };
}

/** CPU time (user + system) of this process per call, at concurrency 64: less sensitive to a busy machine than latency. */
async function cpuPerCall(op: () => Promise<void>, total: number): Promise<number> {
  await measure(op, 500, 64);
  const before = process.cpuUsage();
  await measure(op, total, 64);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / total;
}
