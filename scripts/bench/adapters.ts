// Adapters benchmark, each beside a baseline measured in the same run:
//   - HTTP: an invoke through the Core's dispatcher and HTTP adapter vs fetch straight to the same
//     plugin server (a separate process) with the same PluginRequest;
//   - MCP stdio: an invoke through the dispatcher and McpAdapter vs a direct SDK client of its own
//     server-everything process, both calling the `echo` tool;
//   - built-in: the cost of a dispatcher invocation of an in-process plugin vs calling its function.
// The Core is the real one (startCore), in-process, with retrieval disabled.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log.js';
import { startCore, type RunningCore } from '../../src/main.js';
import type { PluginResult } from '../../src/protocol/types.js';
import { markdownTable, measure, percentile, ratio, type LatencyStats } from './stats.js';

const require = createRequire(import.meta.url);

export interface AdaptersBenchOptions {
  http_calls?: number;
  mcp_calls?: number;
  builtin_calls?: number;
}

// The plugin server runs in its own process, as a real http plugin would; it answers /run with a
// PluginResult and /health with ok, and prints its port.
const HTTP_PLUGIN_SOURCE = `
import { createServer } from 'node:http';
const server = createServer((req, res) => {
  if (req.url === '/health') return res.end('ok');
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const request = JSON.parse(body);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ request_id: request.request_id, plugin_id: request.plugin_id, success: true, text: 'echo: ' + request.parameters.text }));
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log('ready ' + server.address().port));
`;

const BUILTIN_MANIFEST = `id: bench-echo
name: Bench echo
description: Echoes its text, for the benchmark.
capabilities:
  - id: echo
    name: Echo
    description: Returns the text.
    parameters:
      - { name: text, type: string, required: true }
`;
const BUILTIN_MODULE = `export function echo(params) { return 'echo: ' + params.text; }\n`;

function startHttpPlugin(): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', HTTP_PLUGIN_SOURCE], { stdio: ['ignore', 'pipe', 'inherit'] });
    let buffer = '';
    const timer = setTimeout(() => reject(new Error('http plugin did not start')), 15_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const match = /ready (\d+)/.exec(buffer);
      if (match) {
        clearTimeout(timer);
        resolve({ child, port: Number(match[1]) });
      }
    });
    child.once('exit', (code) => reject(new Error(`http plugin exited with ${code}`)));
  });
}

function expectSuccess(result: PluginResult, what: string): void {
  if (!result.success) throw new Error(`${what} failed: ${result.error ?? 'unknown error'}`);
}

async function waitOnline(core: RunningCore, id: string, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (
    core.ctx.registry.get(id)?.state !== 'online' ||
    core.ctx.registry.get(id)?.descriptor.capabilities.every((c) => c.id !== 'echo' && id === 'everything')
  ) {
    if (Date.now() > until) throw new Error(`plugin ${id} not online: ${core.ctx.registry.get(id)?.state_reason ?? 'not registered'}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The two sides alternate call by call, so the drift of a noisy machine (other processes, GC, CPU
 * frequency) hits both alike; sequential calls, one in flight.
 */
async function sideBySide(a: () => Promise<void>, b: () => Promise<void>, total: number): Promise<[LatencyStats, LatencyStats]> {
  const samples: [number[], number[]] = [[], []];
  const sides = [a, b] as const;
  const begin = performance.now();
  for (let i = 0; i < total; i++) {
    for (const side of [0, 1] as const) {
      const t0 = performance.now();
      await sides[side]();
      samples[side].push(performance.now() - t0);
    }
  }
  const elapsed = performance.now() - begin;
  const stats = (latencies: number[]): LatencyStats => {
    latencies.sort((x, y) => x - y);
    const sum = latencies.reduce((s, x) => s + x, 0);
    return {
      count: latencies.length,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      mean: sum / latencies.length,
      throughput: (latencies.length / elapsed) * 1000,
    };
  };
  return [stats(samples[0]), stats(samples[1])];
}

export async function runAdaptersBench(options: AdaptersBenchOptions = {}): Promise<string> {
  const httpCalls = options.http_calls ?? 2000;
  const mcpCalls = options.mcp_calls ?? 1000;
  const builtinCalls = options.builtin_calls ?? 20_000;
  const root = mkdtempSync(join(tmpdir(), 'homeclaw-bench-adapters-'));
  const pluginsDir = join(root, 'plugins');
  mkdirSync(join(pluginsDir, 'bench-echo'), { recursive: true });
  writeFileSync(join(pluginsDir, 'bench-echo', 'plugin.yaml'), BUILTIN_MANIFEST);
  writeFileSync(join(pluginsDir, 'bench-echo', 'index.js'), BUILTIN_MODULE);
  const everything = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');

  const loaded = loadConfig({
    env: {},
    overrides: {
      data_dir: join(root, 'data'),
      log_level: 'silent',
      broker: { port: 0, ws_port: 0 },
      http: { port: 0, admin_token: 'bench-admin-token-0123456789' },
      plugins: { dir: pluginsDir, hot_reload: false },
      retrieval: { enabled: false },
      // A long poll interval: health checks would otherwise share the plugin server with the measurement.
      liveness: { health_poll_sec: 60 },
    },
  });
  if (!loaded.ok) throw new Error(`bench config invalid: ${JSON.stringify(loaded.errors)}`);

  const plugin = await startHttpPlugin();
  const core = await startCore({ config: loaded.config, log: silentLogger() });
  const direct = new Client({ name: 'bench-direct', version: '1.0.0' });
  const rows: (string | number)[][] = [];
  try {
    const base = `http://127.0.0.1:${plugin.port}`;
    const { registry, dispatcher } = core.ctx;
    const registered = [
      registry.register({
        owner: 'api',
        descriptor: {
          id: 'bench-http',
          name: 'Bench http',
          description: 'Echo over HTTP.',
          type: 'http',
          source: 'external',
          health_check_url: `${base}/health`,
          config: { base_url: base },
          capabilities: [
            { id: 'echo', name: 'Echo', description: 'Echo.', parameters: [{ name: 'text', type: 'string', required: true }], post_process: false },
          ],
        },
      }),
      registry.register({
        owner: 'api',
        descriptor: {
          id: 'everything',
          name: 'Everything',
          description: 'server-everything over stdio.',
          type: 'mcp',
          source: 'external',
          config: { transport: 'stdio', command: process.execPath, args: [everything, 'stdio'] },
          capabilities: [{ id: 'run', name: 'Run', description: 'Placeholder until the tools are listed.', parameters: [], post_process: false }],
        },
      }),
    ];
    for (const outcome of registered) if (!outcome.ok) throw new Error(`registration failed: ${JSON.stringify(outcome.errors)}`);
    await Promise.all([waitOnline(core, 'bench-http'), waitOnline(core, 'everything'), waitOnline(core, 'bench-echo')]);
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: [everything, 'stdio'], stderr: 'ignore' }));

    // ---- HTTP --------------------------------------------------------------------------------
    let n = 0;
    const viaCoreHttp = async (): Promise<void> => {
      expectSuccess(await dispatcher.invoke({ plugin_id: 'bench-http', capability_id: 'echo', parameters: { text: `m${n++}` } }), 'http invoke');
    };
    const directFetch = async (): Promise<void> => {
      const i = n++;
      const response = await fetch(`${base}/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          request_id: `r${i}`,
          plugin_id: 'bench-http',
          capability_id: 'echo',
          parameters: { text: `m${i}` },
          deadline: Date.now() + 30_000,
        }),
      });
      expectSuccess((await response.json()) as PluginResult, 'direct fetch');
    };
    // The comparison that matters is the HTTP adapter's invoke against a bare fetch; the whole dispatcher path is
    // measured too (it adds the queue, deadline and validation of every invocation).
    const httpAdapter = core.ctx.adapters.get('http');
    const httpRecord = core.ctx.registry.get('bench-http');
    const httpCapability = httpRecord?.descriptor.capabilities.find((c) => c.id === 'echo');
    if (!httpAdapter || !httpRecord || !httpCapability) throw new Error('bench-http is not registered');
    const viaAdapterHttp = async (): Promise<void> => {
      const i = n++;
      const request = { request_id: `a${i}`, plugin_id: 'bench-http', capability_id: 'echo', parameters: { text: `m${i}` }, deadline: Date.now() + 30_000 };
      expectSuccess(
        await httpAdapter.invoke({ record: httpRecord, capability: httpCapability, request, signal: new AbortController().signal }),
        'http adapter',
      );
    };
    await measure(viaCoreHttp, 200, 1);
    await measure(viaAdapterHttp, 200, 1);
    await measure(directFetch, 200, 1);
    const [httpAdapterStats, httpDirectA] = await sideBySide(viaAdapterHttp, directFetch, httpCalls);
    const [httpCore, httpDirect] = await sideBySide(viaCoreHttp, directFetch, httpCalls);
    rows.push(['HTTP: direct fetch POST /run (baseline)', httpDirectA.count, httpDirectA.p50, httpDirectA.p99, '1.00x', '']);
    rows.push([
      "HTTP: the HTTP adapter's invoke",
      httpAdapterStats.count,
      httpAdapterStats.p50,
      httpAdapterStats.p99,
      ratio(httpAdapterStats.p50, httpDirectA.p50),
      httpAdapterStats.p50 / httpDirectA.p50 <= 1.2 ? 'met (<= 1.2x)' : 'MISSED (<= 1.2x)',
    ]);
    rows.push(['HTTP: direct fetch POST /run (baseline, second run)', httpDirect.count, httpDirect.p50, httpDirect.p99, '1.00x', '']);
    rows.push([
      'HTTP: Core dispatcher → HTTP adapter',
      httpCore.count,
      httpCore.p50,
      httpCore.p99,
      ratio(httpCore.p50, httpDirect.p50),
      'whole invocation path (no target)',
    ]);

    // ---- MCP stdio ---------------------------------------------------------------------------
    const viaCoreMcp = async (): Promise<void> => {
      expectSuccess(await dispatcher.invoke({ plugin_id: 'everything', capability_id: 'echo', parameters: { message: `m${n++}` } }), 'mcp invoke');
    };
    const directMcp = async (): Promise<void> => {
      const result = await direct.callTool({ name: 'echo', arguments: { message: `m${n++}` } });
      if (result.isError) throw new Error('direct MCP call failed');
    };
    await measure(viaCoreMcp, 100, 1);
    await measure(directMcp, 100, 1);
    const [mcpCore, mcpDirect] = await sideBySide(viaCoreMcp, directMcp, mcpCalls);
    rows.push(['MCP stdio: direct SDK client tools/call echo (baseline)', mcpDirect.count, mcpDirect.p50, mcpDirect.p99, '1.00x', '']);
    rows.push([
      'MCP stdio: Core dispatcher → McpAdapter',
      mcpCore.count,
      mcpCore.p50,
      mcpCore.p99,
      ratio(mcpCore.p50, mcpDirect.p50),
      mcpCore.p50 / mcpDirect.p50 <= 1.2 ? 'met (<= 1.2x)' : 'MISSED (<= 1.2x)',
    ]);

    // ---- built-in ------------------------------------------------------------------------------
    const module = (await import(pathToFileURL(join(pluginsDir, 'bench-echo', 'index.js')).href)) as { echo: (p: { text: string }) => string };
    const viaCoreBuiltin = async (): Promise<void> => {
      expectSuccess(await dispatcher.invoke({ plugin_id: 'bench-echo', capability_id: 'echo', parameters: { text: `m${n++}` } }), 'built-in invoke');
    };
    let sink = 0;
    const directCall = async (): Promise<void> => {
      sink += (await Promise.resolve(module.echo({ text: `m${n++}` }))).length;
    };
    await measure(viaCoreBuiltin, 2000, 1);
    await measure(directCall, 2000, 1);
    const [builtinCore, builtinDirect] = await sideBySide(viaCoreBuiltin, directCall, builtinCalls);
    if (sink === 0) throw new Error('direct built-in calls returned nothing');
    const us = (ms: number): string => `${(ms * 1000).toFixed(1)} µs`;
    rows.push([
      'Built-in: direct function call (baseline)',
      builtinDirect.count,
      builtinDirect.p50,
      builtinDirect.p99,
      '1.00x',
      `mean ${us(builtinDirect.mean)}`,
    ]);
    rows.push([
      'Built-in: Core dispatcher → inline adapter',
      builtinCore.count,
      builtinCore.p50,
      builtinCore.p99,
      ratio(builtinCore.p50, builtinDirect.p50),
      `mean ${us(builtinCore.mean)}; dispatcher cost ≈ ${us(builtinCore.mean - builtinDirect.mean)} per call`,
    ]);
  } finally {
    await direct.close().catch(() => undefined);
    await core.stop();
    plugin.child.kill('SIGTERM');
    rmSync(root, { recursive: true, force: true });
  }
  return [
    '### Adapters: sequential calls, latencies in ms, ratio of p50 to the baseline measured in the same run',
    '',
    markdownTable(['path', 'calls', 'p50 ms', 'p99 ms', 'p50 vs baseline', 'target / note'], rows),
  ].join('\n');
}

// Run directly: `node dist/scripts/bench/adapters.js`.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(`${await runAdaptersBench()}\n`);
  process.exit(0);
}
