// Stall benchmark: does the Core keep answering while it indexes? `homeclaw start` runs as its own
// process (embedded broker, its own Chroma, embedding workers, a scripted model); an SDK echo plugin in
// another process is invoked over POST /v1/plugins/:id/tools/:tool/run at a steady 50 calls/s (open loop:
// calls are sent on schedule, not after the previous one returned). In each round, interleaved with quiet
// phases: a registration burst of 150 MQTT plugins with 5 examples each, 8 chat messages/s with hybrid
// retrieval (every message different, so none comes from the query cache), and one 256-capability
// registration. The burst's registrations come from one MQTT client, as from a bridge or after a Core
// restart, so what is measured is registering and indexing, not 150 new TCP connections at once. Invoke latency is compared with the quiet phases of the same run. Then the Core's RSS at
// start and with 1,000 connected plugins indexed.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mqtt from 'mqtt';
import { CORE_V8_POOL_FLAG } from '../../src/lifecycle/v8-helper-threads.js';
import { topics } from '../../src/protocol/topics.js';
import { freePort } from '../../test/helpers/ports.js';
import { markdownTable, percentile, ratio } from './stats.js';

const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..');
const FIXTURES = join(ROOT, 'scripts', 'bench', 'fixtures');
const TOKEN = 'stall-bench-token-0123456789';
const CALLS_PER_SEC = 50;
const CHAT_PER_SEC = 8;
const QUIET_MS = 10_000;
const CHAT_MS = 15_000;
const ECHO_MANIFEST = `id: chat-echo
name: Chat echo
description: Repeats the user's words back.
type: inline
capabilities:
  - { id: say, name: Say, description: Echo a text., parameters: [{ name: text, type: string, required: false, default: hi }] }
`;

interface Sample {
  phase: string;
  ms: number;
  ok: boolean;
}

interface CoreStatus {
  retrieval: { state: string; backlog?: number };
  event_loop: { p99_ms: number; max_ms: number };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function spawnUntil(args: string[], marker: string, env: NodeJS.ProcessEnv = {}, timeoutMs = 300_000): Promise<ChildProcess> {
  return spawnWithOutput(args, marker, env, timeoutMs).then(({ child }) => child);
}

/** Starts a Node script and resolves once its output contains `marker`, with the output so far. */
function spawnWithOutput(args: string[], marker: string, env: NodeJS.ProcessEnv = {}, timeoutMs = 300_000): Promise<{ child: ChildProcess; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} not ready in time:\n${output.slice(-2000)}`)), timeoutMs);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes(marker)) {
        clearTimeout(timer);
        child.stdout?.removeAllListeners('data');
        child.stderr?.removeAllListeners('data');
        child.stdout?.resume();
        child.stderr?.resume();
        resolve({ child, output });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}:\n${output.slice(-2000)}`)));
  });
}

function stop(child: ChildProcess | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (!child || child.exitCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  });
}

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.replace(/\D+/g, '') ?? 0) / 1024;
}

function summary(latencies: number[]): { count: number; p50: number; p99: number } {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

export async function runStallBench(options: { rounds?: number; rss?: boolean; nodeDefaultV8Pool?: boolean } = {}): Promise<string> {
  const rounds = options.rounds ?? 2;
  // The Core runs as npm start runs it (one V8 helper thread), unless the comparison without is asked for.
  const coreNodeArgs = options.nodeDefaultV8Pool ? [] : [CORE_V8_POOL_FLAG];
  const load = [loadavg()[0]!];
  const dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-bench-stall-'));
  const pluginsDir = join(dataDir, 'plugins');
  mkdirSync(join(pluginsDir, 'chat-echo'), { recursive: true });
  writeFileSync(join(pluginsDir, 'chat-echo', 'plugin.yaml'), ECHO_MANIFEST);
  // The chat phase sends each of its four users 2 messages/s: the per-user budget is lifted, since the
  // suite measures what the engine's work does to other calls, not the budget.
  const configFile = join(dataDir, 'homeclaw.yaml');
  writeFileSync(configFile, 'conversation:\n  max_messages_per_minute: 1000000\n');
  writeFileSync(join(pluginsDir, 'chat-echo', 'index.js'), "export function say(p) { return 'echo: ' + p.text; }\n");
  // The model runs in its own process: answering it here would load the event loop that times the invokes.
  const llm = await spawnWithOutput([join(FIXTURES, 'routing-llm.mjs'), 'chat-echo', 'say'], 'ready');
  const llmUrl = /ready (\S+)/.exec(llm.output)?.[1] ?? '';
  const [mqttPort, httpPort] = [await freePort(), await freePort()];
  const mqttUrl = `mqtt://127.0.0.1:${mqttPort}`;
  const httpUrl = `http://127.0.0.1:${httpPort}`;
  const children: ChildProcess[] = [llm.child];
  const samples: Sample[] = [];
  const notes: string[] = [];
  let client: mqtt.MqttClient | undefined;
  let phase = 'warm-up';
  let running = true;

  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${httpUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return (await res.json()) as T;
  };
  const status = (): Promise<CoreStatus> => api<CoreStatus>('GET', '/api/status');
  /** Waits until every plugin is embedded; returns the time it took, the peak backlog and the loop delay seen. */
  const untilIndexed = async (minMs = 0): Promise<{ ms: number; peak: number; loopP99: number }> => {
    const t0 = Date.now();
    let peak = 0;
    let loopP99 = 0;
    for (;;) {
      const s = await status();
      peak = Math.max(peak, s.retrieval.backlog ?? 0);
      loopP99 = Math.max(loopP99, s.event_loop.p99_ms);
      if (s.retrieval.state === 'ok' && s.retrieval.backlog === 0 && Date.now() - t0 >= minMs) return { ms: Date.now() - t0, peak, loopP99 };
      await sleep(250);
    }
  };

  try {
    const core = await spawnUntil([...coreNodeArgs, join(ROOT, 'dist', 'src', 'cli.js'), 'start'], 'HomeClaw Core running', {
      HOMECLAW_CONFIG: configFile,
      HOMECLAW_DATA_DIR: dataDir,
      HOMECLAW_PLUGINS_DIR: pluginsDir,
      HOMECLAW_HOT_RELOAD: 'false',
      HOMECLAW_MQTT_PORT: String(mqttPort),
      HOMECLAW_HTTP_PORT: String(httpPort),
      HOMECLAW_WS_PORT: '0',
      HOMECLAW_ADMIN_TOKEN: TOKEN,
      HOMECLAW_LLM_BASE_URL: llmUrl,
      HOMECLAW_LLM_MODEL: 'scripted',
      HOMECLAW_LOG_LEVEL: 'warn',
      HOMECLAW_RETRIEVAL_ENABLED: 'true',
    });
    children.push(core);
    children.push(await spawnUntil([join(FIXTURES, 'echo-plugins.mjs'), mqttUrl, '1', '30', 'stall-echo', '0'], 'ready'));
    await untilIndexed();
    const rssStart = rssMb(core.pid!);
    client = await mqtt.connectAsync(mqttUrl, { protocolVersion: 4, reconnectPeriod: 0 });

    // The measured load: 50 invokes/s on schedule, each tagged with the phase it was sent in.
    const invoker = (async () => {
      const interval = 1000 / CALLS_PER_SEC;
      let next = performance.now();
      const inFlight = new Set<Promise<void>>();
      let n = 0;
      while (running) {
        const tag = phase;
        const t0 = performance.now();
        const call = fetch(`${httpUrl}/v1/plugins/stall-echo-0/tools/echo/run`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ text: `ping ${n++}` }),
        })
          .then(async (res) => {
            await res.arrayBuffer();
            samples.push({ phase: tag, ms: performance.now() - t0, ok: res.ok });
          })
          .catch(() => {
            samples.push({ phase: tag, ms: performance.now() - t0, ok: false });
          });
        inFlight.add(call);
        void call.finally(() => inFlight.delete(call));
        next += interval;
        await sleep(Math.max(0, next - performance.now()));
      }
      await Promise.all(inFlight);
    })();

    const chatLatencies: number[] = [];
    const disturbances: (string | number)[][] = [];
    await sleep(3000); // warm-up
    for (let round = 1; round <= rounds; round++) {
      phase = 'quiet';
      await sleep(QUIET_MS);

      phase = 'burst';
      const burstStart = Date.now();
      await registerBurst(client, round);
      const burst = await untilIndexed(1000);
      disturbances.push([round, '150 registrations x 5 examples at once', ((Date.now() - burstStart) / 1000).toFixed(1), burst.peak, burst.loopP99]);

      phase = 'quiet';
      await sleep(QUIET_MS);

      phase = 'chat';
      const chat = await chatFor(client, CHAT_MS, chatLatencies);
      const chatIndexed = await untilIndexed();
      disturbances.push([round, `chat ${CHAT_PER_SEC} msg/s, hybrid (${chat} messages)`, (CHAT_MS / 1000).toFixed(1), chatIndexed.peak, chatIndexed.loopP99]);

      phase = 'quiet';
      await sleep(QUIET_MS);

      phase = 'big';
      const bigStart = Date.now();
      const capabilities = Array.from({ length: 256 }, (_, i) => ({
        id: `zone_${i}`,
        name: `Zone ${i}`,
        description: `Open or close the sprinkler valve of irrigation zone ${i} (round ${round}).`,
        parameters: [{ name: 'minutes', type: 'integer', required: false }],
      }));
      await client.publishAsync(
        topics.register(),
        JSON.stringify({
          id: `big-r${round}`,
          name: 'Irrigation',
          description: 'Garden irrigation, 256 zones.',
          epoch: Date.now(),
          heartbeat_interval_sec: 3600,
          capabilities,
        }),
        { qos: 1 },
      );
      const big = await untilIndexed(1000);
      disturbances.push([round, 'one 256-capability registration', ((Date.now() - bigStart) / 1000).toFixed(1), big.peak, big.loopP99]);
    }
    phase = 'quiet';
    await sleep(QUIET_MS);
    running = false;
    await invoker;

    // RSS with 1,000 connected plugins, all indexed.
    let memory: (string | number)[][] = [];
    if (options.rss !== false) {
      children.push(await spawnUntil([join(FIXTURES, 'echo-plugins.mjs'), mqttUrl, '1000', '30', 'fleet', '0'], 'ready', {}, 900_000));
      const indexed = await untilIndexed();
      const registered = (await api<{ plugins: unknown[] }>('GET', '/api/plugins')).plugins.length;
      const rssFleet = rssMb(core.pid!);
      memory = [[rssStart, registered, rssFleet, (indexed.ms / 1000).toFixed(1), ((rssFleet - rssStart) * 1024) / 1000]];
    }
    load.push(loadavg()[0]!);

    const phases = ['quiet', 'burst', 'chat', 'big'] as const;
    const labels: Record<(typeof phases)[number], string> = {
      quiet: 'quiet',
      burst: 'registration burst: 150 plugins x 5 examples',
      chat: `${CHAT_PER_SEC} chat messages/s, hybrid retrieval`,
      big: 'one 256-capability registration',
    };
    const quiet = summary(samples.filter((s) => s.phase === 'quiet').map((s) => s.ms));
    const rows = phases.map((name) => {
      const mine = samples.filter((s) => s.phase === name);
      const stats = summary(mine.map((s) => s.ms));
      const failed = mine.filter((s) => !s.ok).length;
      const met = name === 'quiet' ? '' : stats.p50 <= 1.5 * quiet.p50 && stats.p99 <= 2 * quiet.p99 ? 'met' : 'NOT met';
      return [labels[name], stats.count, failed, stats.p50, stats.p99, ratio(stats.p50, quiet.p50), ratio(stats.p99, quiet.p99), met];
    });
    const chatStats = summary(chatLatencies);
    notes.push(
      `chat round trips (message in -> reply out over MQTT, hybrid retrieval): p50 ${chatStats.p50.toFixed(1)} ms, p99 ${chatStats.p99.toFixed(1)} ms over ${chatStats.count} messages`,
    );
    notes.push(`machine load average (1 min): ${load.map((l) => l.toFixed(2)).join(' at start, ')} at the end`);
    return [
      `### Stall: invoke latency at ${CALLS_PER_SEC} calls/s over HTTP -> MQTT plugin, ${rounds} interleaved rounds (Core started with ${coreNodeArgs.length ? `node ${coreNodeArgs.join(' ')}` : "Node's default V8 helper threads"})`,
      '',
      markdownTable(['situation', 'calls', 'failed', 'p50 ms', 'p99 ms', 'p50 vs quiet', 'p99 vs quiet', 'target (p50 <= 1.5x, p99 <= 2x)'], rows),
      '',
      markdownTable(['round', 'disturbance', 'lasted s', 'peak backlog (plugins)', 'Core event-loop p99 ms (max seen)'], disturbances),
      '',
      ...(memory.length
        ? [markdownTable(['Core RSS at start MB', 'plugins registered', 'Core RSS then MB', 'indexing 1,000 more s', 'per added plugin KB'], memory), '']
        : []),
      ...notes.map((n) => `- ${n}`),
    ].join('\n');
  } finally {
    running = false;
    await client?.endAsync(true).catch(() => undefined);
    for (const child of children.reverse()) await stop(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * 150 registrations with 5 examples each, published at once by one client, as a bridge or a plugin host
 * registers its devices (or every plugin re-registers after a Core restart). Waits for all the acks.
 */
async function registerBurst(client: mqtt.MqttClient, round: number): Promise<void> {
  const THINGS = ['lamp', 'garage door', 'heater', 'sprinkler', 'speaker', 'oven', 'blinds', 'fan', 'kettle', 'doorbell'];
  const ids = Array.from({ length: 150 }, (_, i) => `burst-r${round}-${i}`);
  await client.subscribeAsync(
    ids.map((id) => topics.registered(id)),
    { qos: 1 },
  );
  const waiting = new Set(ids);
  const acked = new Promise<void>((resolve) => {
    const onAck = (topic: string): void => {
      for (const id of waiting) if (topic === topics.registered(id)) waiting.delete(id);
      if (waiting.size === 0) {
        client.off('message', onAck);
        resolve();
      }
    };
    client.on('message', onAck);
  });
  ids.forEach((id, i) => {
    const thing = THINGS[i % THINGS.length]!;
    const descriptor = {
      id,
      name: `${thing} ${i}`,
      description: `Controls the ${thing} number ${i} (round ${round}).`,
      examples: Array.from({ length: 5 }, (_, j) => `ask ${id} to switch the ${THINGS[(i + j) % THINGS.length]} ${j === 0 ? 'on' : `to level ${j}`}`),
      capabilities: [{ id: 'set', description: `Switch the ${thing} on or off`, parameters: [{ name: 'on', type: 'boolean' }] }],
      epoch: Date.now(),
      heartbeat_interval_sec: 3600,
    };
    client.publish(topics.register(), JSON.stringify(descriptor), { qos: 1 });
  });
  await acked;
}

/** Sends CHAT_PER_SEC distinct messages per second on a channel for `ms`; records each reply's latency. */
async function chatFor(client: mqtt.MqttClient, ms: number, latencies: number[]): Promise<number> {
  const channel = 'stall';
  await client.subscribeAsync(topics.channelOut(channel), { qos: 0 });
  const waiting = new Map<string, number>();
  let refused = 0;
  const onMessage = (topic: string, payload: Buffer): void => {
    if (topic !== topics.channelOut(channel)) return;
    const reply = JSON.parse(payload.toString()) as { request_id?: string; error_code?: string };
    const id = reply.request_id;
    const sent = id ? waiting.get(id) : undefined;
    if (sent === undefined) return;
    waiting.delete(id!);
    if (reply.error_code === 'rate_limited') refused++;
    else latencies.push(performance.now() - sent);
  };
  client.on('message', onMessage);
  const WORDS = ['lamp', 'heater', 'garden', 'music', 'oven', 'window', 'alarm', 'camera', 'door', 'fan'];
  const count = Math.round((ms / 1000) * CHAT_PER_SEC);
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    await sleep(Math.max(0, start + (i * 1000) / CHAT_PER_SEC - performance.now()));
    const request_id = `stall-chat-${Date.now()}-${i}`;
    waiting.set(request_id, performance.now());
    const text = `please echo hello to the ${WORDS[i % WORDS.length]} number ${i} in room ${Math.floor(i / 10)}`;
    client.publish(topics.channelIn(channel), JSON.stringify({ request_id, user_id: `user-${i % 4}`, text }), { qos: 0 });
  }
  const deadline = Date.now() + 30_000;
  while (waiting.size > 0 && Date.now() < deadline) await sleep(50);
  client.off('message', onMessage);
  // A refused message costs the Core nothing: the phase would not be the disturbance it claims to be.
  if (refused > 0) throw new Error(`${refused} chat messages refused by the per-user budget; the suite's configuration must lift it`);
  return count;
}
