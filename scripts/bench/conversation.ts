// Conversation benchmark: the Core's own cost per user message, message in → reply out over
// the MQTT channel topics, with 1,000 registered plugins, at 1 and 32 concurrent users. The model is the
// scripted OpenAI-compatible server answering at once (a route_to_plugin call to a built-in echo), so
// what is measured is retrieval + prompt + tool loop + resolver + dispatch + channel I/O (+ one local
// HTTP model round trip). Baselines in the same run: a bare MQTT round trip through the same broker
// (a client echoing in → out), and the slash-command path (no retrieval, no model).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log.js';
import { startCore, type RunningCore } from '../../src/main.js';
import { topics } from '../../src/protocol/topics.js';
import type { PluginDescriptor } from '../../src/protocol/types.js';
import { ChromaProcess } from '../../src/retrieval/chroma-process.js';
import { startScriptedLlm, type ScriptedLlm } from '../../test/helpers/scripted-llm.js';
import { markdownTable, measure, ratio, type LatencyStats } from './stats.js';

const PLUGINS = 1000;
const MESSAGES = { 1: 200, 32: 640 } as const;
const WORDS = [
  'lamp',
  'garage',
  'heater',
  'garden',
  'music',
  'recipe',
  'calendar',
  'printer',
  'vacuum',
  'alarm',
  'camera',
  'door',
  'fridge',
  'oven',
  'window',
  'pool',
  'energy',
  'solar',
  'car',
  'bike',
];

const ECHO_MANIFEST = `id: echo
name: Echo
description: Repeats the user's words back. Use when the user says echo.
type: inline
capabilities:
  - id: say
    name: Say
    description: Echo a text.
    post_process: false
    parameters:
      - name: text
        type: string
        required: false
        default: hi
`;
const ECHO_MODULE = `export function say(params) { return 'echo: ' + params.text; }\n`;

function syntheticPlugin(i: number): PluginDescriptor {
  const a = WORDS[i % WORDS.length]!;
  const b = WORDS[(i * 7 + 3) % WORDS.length]!;
  return {
    id: `bench-${i}`,
    name: `Bench ${a} ${i}`,
    description: `Controls the ${a} and the ${b} number ${i} in the house.`,
    source: 'external',
    type: 'http',
    config: { endpoint: `http://127.0.0.1:9/bench-${i}` },
    capabilities: [
      {
        id: 'run',
        name: `Run ${a}`,
        description: `Switch the ${a} ${i} on or off.`,
        post_process: false,
        parameters: [{ name: 'state', type: 'string', required: false }],
      },
    ],
  };
}

interface BenchCore {
  core: RunningCore;
  client: MqttClient;
  dataDir: string;
  pluginsDir: string;
  close(): Promise<void>;
}

async function startBenchCore(llm: ScriptedLlm, chromaUrl: string | null): Promise<BenchCore> {
  const dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-bench-conv-'));
  const pluginsDir = mkdtempSync(join(tmpdir(), 'homeclaw-bench-conv-plugins-'));
  mkdirSync(join(pluginsDir, 'echo'));
  writeFileSync(join(pluginsDir, 'echo', 'plugin.yaml'), ECHO_MANIFEST);
  writeFileSync(join(pluginsDir, 'echo', 'index.js'), ECHO_MODULE);
  const loaded = loadConfig({
    env: {},
    overrides: {
      data_dir: dataDir,
      log_level: 'silent',
      broker: { port: 0, ws_port: 0 },
      http: { port: 0, admin_token: 'bench-admin-token-0123456789' },
      plugins: { dir: pluginsDir, hot_reload: false },
      retrieval: chromaUrl ? { enabled: true, chroma: { url: chromaUrl } } : { enabled: false },
      llm: { base_url: llm.url, model: 'scripted' },
      // The bench floods one session per user; HTTP plugins are never health-polled during the run.
      liveness: { health_poll_sec: 3600 },
      // Each user sends as fast as it is answered: the suite measures the engine, not the per-user budget.
      conversation: { max_messages_per_minute: 1_000_000 },
    },
  });
  if (!loaded.ok) throw new Error(`bench config invalid: ${JSON.stringify(loaded.errors)}`);
  const core = await startCore({ config: loaded.config, log: silentLogger() });
  for (let i = 0; i < PLUGINS; i++) {
    const outcome = core.ctx.registry.register({ descriptor: syntheticPlugin(i), owner: 'bench' });
    if (!outcome.ok) throw new Error(`register bench-${i}: ${JSON.stringify(outcome.errors)}`);
  }
  const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${core.mqttPort}`, { protocolVersion: 4, reconnectPeriod: 0 });
  return {
    core,
    client,
    dataDir,
    pluginsDir,
    async close() {
      await client.endAsync(true);
      await core.stop();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(pluginsDir, { recursive: true, force: true });
    },
  };
}

/** Sends on in, resolves when the reply with the same request_id arrives on out. */
function roundTripper(client: MqttClient, inTopic: string, outTopic: string): (body: (requestId: string) => object) => Promise<void> {
  const waiting = new Map<string, (refusal?: string) => void>();
  client.on('message', (topic, payload) => {
    if (topic !== outTopic) return;
    const reply = JSON.parse(payload.toString()) as { request_id?: string; error_code?: string; text?: string };
    const done = reply.request_id ? waiting.get(reply.request_id) : undefined;
    if (done) {
      waiting.delete(reply.request_id!);
      // A refused message would be timed as if answered: the figures would measure the refusal.
      done(reply.error_code === 'rate_limited' ? reply.text : undefined);
    }
  });
  return (body) =>
    new Promise<void>((resolve, reject) => {
      const requestId = randomUUID();
      const timer = setTimeout(() => reject(new Error(`no reply for ${requestId}`)), 30_000);
      waiting.set(requestId, (refusal) => {
        clearTimeout(timer);
        if (refusal) reject(new Error(`message refused by the per-user budget: ${refusal}`));
        else resolve();
      });
      client.publish(inTopic, JSON.stringify(body(requestId)), { qos: 0 });
    });
}

/**
 * slash: a slash command (no retrieval, no model). llm: every message a different sentence, so each one
 * is embedded (none comes from the query cache). llm-repeat: the same sentence every time (cache hits).
 */
async function measureCore(bench: BenchCore, concurrency: 1 | 32, kind: 'slash' | 'llm' | 'llm-repeat'): Promise<LatencyStats> {
  const channel = `bench${kind.replace('-', '')}${concurrency}`;
  await bench.client.subscribeAsync(topics.channelOut(channel), { qos: 0 });
  const send = roundTripper(bench.client, topics.channelIn(channel), topics.channelOut(channel));
  let n = 0;
  const op = (): Promise<void> => {
    const i = n++;
    const user = `user-${i % concurrency}`;
    const text =
      kind === 'slash'
        ? '/echo say text=hello'
        : kind === 'llm-repeat'
          ? 'echo hello to the lamp please'
          : `echo hello to the ${WORDS[i % WORDS.length]} number ${i} please`;
    return send((request_id) => ({ request_id, user_id: user, text }));
  };
  await measure(op, 20, Math.min(concurrency, 4)); // warm-up
  return measure(op, MESSAGES[concurrency], concurrency);
}

async function measureBareMqtt(bench: BenchCore, concurrency: 1 | 32): Promise<LatencyStats> {
  const port = bench.core.mqttPort!;
  const echo = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { protocolVersion: 4, reconnectPeriod: 0 });
  const inTopic = `bench/bare${concurrency}/in`;
  const outTopic = `bench/bare${concurrency}/out`;
  await echo.subscribeAsync(inTopic, { qos: 0 });
  echo.on('message', (_topic, payload) => echo.publish(outTopic, payload, { qos: 0 }));
  const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { protocolVersion: 4, reconnectPeriod: 0 });
  await client.subscribeAsync(outTopic, { qos: 0 });
  const send = roundTripper(client, inTopic, outTopic);
  const op = (): Promise<void> => send((request_id) => ({ request_id, user_id: 'u', text: 'echo hello to the lamp please' }));
  await measure(op, 20, 1);
  const stats = await measure(op, MESSAGES[concurrency], concurrency);
  await client.endAsync(true);
  await echo.endAsync(true);
  return stats;
}

async function waitForDense(core: RunningCore, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const status = core.ctx.retrieval.status();
    if (status.state === 'ok' && status.indexed >= PLUGINS) return true;
    await new Promise((r) => setTimeout(r, 500));
  }
  return false;
}

export async function runConversationBench(): Promise<string> {
  const llm = await startScriptedLlm({
    // A model that answers at once: the first round routes to echo, nothing else is ever asked.
    respond: () => ({ tool_calls: [{ name: 'route_to_plugin', arguments: { plugin_id: 'echo', capability_id: 'say', parameters: { text: 'hello' } } }] }),
  });
  const rows: (string | number)[][] = [];
  const notes: string[] = [];
  const addRows = (mode: string, label: string, stats: LatencyStats, baseline: LatencyStats): void => {
    rows.push([mode, label, stats.count, stats.p50, stats.p99, stats.throughput.toFixed(0), ratio(stats.p50, baseline.p50), ratio(stats.p99, baseline.p99)]);
  };

  const runMode = async (mode: string, chromaUrl: string | null): Promise<void> => {
    const bench = await startBenchCore(llm, chromaUrl);
    try {
      if (chromaUrl) {
        const t0 = Date.now();
        const ready = await waitForDense(bench.core, 600_000);
        notes.push(
          ready
            ? `hybrid: ${PLUGINS} plugins embedded and indexed in ${((Date.now() - t0) / 1000).toFixed(0)} s`
            : 'hybrid: index not ready in 10 min, measured degraded (BM25)',
        );
      }
      for (const concurrency of [1, 32] as const) {
        const bare = await measureBareMqtt(bench, concurrency);
        const slash = await measureCore(bench, concurrency, 'slash');
        const before = llm.requests.length;
        const full = await measureCore(bench, concurrency, 'llm');
        if (llm.requests.length - before < MESSAGES[concurrency]) throw new Error('the model was not called for every message');
        addRows(mode, `bare MQTT round trip (baseline), ${concurrency} user(s)`, bare, bare);
        addRows(mode, `slash command, ${concurrency} user(s)`, slash, bare);
        addRows(mode, `message → LLM path → reply, ${concurrency} user(s), every message different`, full, bare);
        if (chromaUrl) {
          const repeated = await measureCore(bench, concurrency, 'llm-repeat');
          addRows(mode, `the same message again and again (query cache), ${concurrency} user(s)`, repeated, bare);
        }
      }
      llm.requests.length = 0;
    } finally {
      await bench.close();
    }
  };

  try {
    await runMode('bm25', null);
    let chroma: ChromaProcess | undefined;
    const chromaDir = mkdtempSync(join(tmpdir(), 'homeclaw-bench-conv-chroma-'));
    try {
      chroma = new ChromaProcess({ dataDir: chromaDir, port: 0, log: silentLogger(), startTimeoutMs: 60_000 });
      const url = await chroma.start();
      await runMode('hybrid', url);
    } catch (err) {
      notes.push(`hybrid not measured: ${(err as Error).message}`);
    } finally {
      await chroma?.stop().catch(() => undefined);
      rmSync(chromaDir, { recursive: true, force: true });
    }
  } finally {
    await llm.close();
  }

  const table = markdownTable(['retrieval', 'path', 'messages', 'p50 ms', 'p99 ms', 'msg/s', 'p50 vs bare', 'p99 vs bare'], rows);
  return [
    `### Conversation: message in → reply out over MQTT, ${PLUGINS} registered plugins (scripted model answers at once)`,
    '',
    table,
    '',
    ...notes.map((n) => `- ${n}`),
  ].join('\n');
}

// Allows `node dist/scripts/bench/conversation.js` on its own.
if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'))) {
  process.stdout.write(`${await runConversationBench()}\n`);
  process.exit(0);
}
