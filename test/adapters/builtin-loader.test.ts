import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBuiltinLoader, type BuiltinLoader } from '../../src/adapters/builtin-loader.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { Registry } from '../../src/registry/registry.js';
import { silentLogger } from '../../src/log.js';
import { waitFor } from './helpers.js';

let root: string;
let pluginsDir: string;
let dataDir: string;
let registry: Registry;
let loader: BuiltinLoader | undefined;
let logLines: string[];
let dispatcher: Dispatcher | undefined;

function capturingLogger() {
  logLines = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  return pino({ level: 'info' }, stream);
}

function plugin(folder: string, files: Record<string, string>): string {
  const dir = join(pluginsDir, folder);
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** Rewrites a module file with a later mtime: the cache-busting query is built from it. */
function rewrite(path: string, text: string): void {
  writeFileSync(path, text);
  const later = new Date(Date.now() + 5000);
  utimesSync(path, later, later);
}

async function startLoader(hot_reload = false, import_timeout_ms = 10_000): Promise<BuiltinLoader> {
  loader = createBuiltinLoader({
    dir: pluginsDir,
    data_dir: dataDir,
    registry,
    log: capturingLogger(),
    hot_reload,
    debounce_ms: 50,
    compiled_dir: join(root, 'dist-plugins'),
    import_timeout_ms,
  });
  await loader.start();
  dispatcher = new Dispatcher({
    registry,
    adapters: [loader.adapter],
    config: { default_timeout_sec: 5, default_max_concurrency: 2, default_queue_limit: 10 },
    log: silentLogger(),
  });
  return loader;
}

const GREETER_YAML = `
id: greeter
name: Greeter
description: Greets people by name. Use when the user wants a greeting.
version: "1.2.0"
examples: ["say hello to Bob"]
capabilities:
  - id: greet
    name: Greet
    description: Greets one person.
    parameters:
      - { name: name, type: string, required: true, description: Who to greet }
  - id: context_probe
    name: Context probe
    description: Shows what the handler receives.
    parameters: []
`;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'hc-builtin-'));
  pluginsDir = join(root, 'plugins');
  dataDir = join(root, 'data');
  mkdirSync(pluginsDir);
  registry = new Registry({ db: new Database(':memory:'), events: new TypedEventBus(silentLogger()), log: silentLogger() });
});

afterEach(async () => {
  await dispatcher?.stop();
  await loader?.stop();
  loader = undefined;
  dispatcher = undefined;
  rmSync(root, { recursive: true, force: true });
});

describe('built-in loader: module forms', () => {
  it('loads plugin.yaml + exported functions, merges config.yml and gives each plugin its data dir', async () => {
    plugin('greeter', {
      'plugin.yaml': GREETER_YAML,
      'config.yml':
        'default_parameters: { name: World }\nuse_defaults_directly: true\ngreeting: Howdy\ncapabilities:\n  greet:\n    default_parameters: { name: Pal }\n',
      'index.mjs': `
        export async function greet(params, ctx) { return ctx.config.greeting + ', ' + params.name + '!'; }
        export function contextProbe(params, ctx) {
          return { text: 'probe', data: { data_dir: ctx.data_dir, user: ctx.request.user_id, aborted: ctx.signal.aborted, config: ctx.config } };
        }`,
    });
    await startLoader();
    const record = registry.get('greeter')!;
    expect(record).toMatchObject({ owner: 'builtin', state: 'online' });
    expect(record.descriptor).toMatchObject({ source: 'built-in', type: 'inline', version: '1.2.0' });
    expect(record.descriptor.config).toMatchObject({
      default_parameters: { name: 'World' },
      use_defaults_directly: true,
      greeting: 'Howdy',
      capabilities: { greet: { default_parameters: { name: 'Pal' } } },
    });
    expect(logLines.some((l) => l.includes('Loaded built-in plugin greeter 1.2.0'))).toBe(true);

    const hello = await dispatcher!.invoke({ plugin_id: 'greeter', capability_id: 'greet', parameters: { name: 'Bob' } });
    expect(hello).toMatchObject({ success: true, text: 'Howdy, Bob!' });
    // snake_case capability ids find camelCase exports too.
    const probe = await dispatcher!.invoke({ plugin_id: 'greeter', capability_id: 'context_probe', context: { user_id: 'alice' } });
    expect(probe.success).toBe(true);
    const data = probe.data as { data_dir: string; user: string; aborted: boolean };
    expect(data.data_dir).toBe(join(dataDir, 'plugins', 'greeter'));
    expect(existsSync(data.data_dir)).toBe(true);
    expect(data.user).toBe('alice');
    expect(data.aborted).toBe(false);
  });

  it('instantiates a class whose methods carry the capability ids, once', async () => {
    plugin('counter', {
      'plugin.yaml':
        'id: counter\nname: Counter\ndescription: Counts calls.\ncapabilities:\n  - { id: bump, name: Bump, description: Adds one, parameters: [] }\n',
      'index.mjs': `
        export default class Counter {
          constructor(init) { this.count = 0; this.id = init.plugin_id; }
          bump() { this.count += 1; return { text: this.id + ' ' + this.count, data: { count: this.count } }; }
        }`,
    });
    await startLoader();
    await dispatcher!.invoke({ plugin_id: 'counter' });
    const second = await dispatcher!.invoke({ plugin_id: 'counter' });
    expect(second).toMatchObject({ success: true, text: 'counter 2', data: { count: 2 } });
  });

  it('loads a RAGFlow-style class (getMetadata + invoke) without a manifest', async () => {
    plugin('calc', {
      'index.mjs': `
        export class BadCalculatorPlugin {
          static _version_ = '1.0.0';
          static getMetadata() {
            return { name: 'bad_calculator', description: 'A tool to calculate the sum of two numbers (will give wrong answer)',
              displayName: '$t:bad_calculator.name',
              parameters: { a: { type: 'number', description: 'The first number', required: true },
                            b: { type: 'number', description: 'The second number', required: true } } };
          }
          invoke(params) { return String(params.a + params.b + 100); }
        }`,
    });
    await startLoader();
    const record = registry.get('bad_calculator')!;
    expect(record.descriptor.version).toBe('1.0.0');
    expect(record.descriptor.capabilities.map((c) => c.id)).toEqual(['bad_calculator']);
    expect(logLines.some((l) => l.includes('Loaded built-in plugin bad_calculator 1.0.0'))).toBe(true);
    const result = await dispatcher!.invoke({ plugin_id: 'bad_calculator', parameters: { a: 1, b: 2 } });
    expect(result).toMatchObject({ success: true, text: '103' });
    const invalid = await dispatcher!.invoke({ plugin_id: 'bad_calculator', parameters: { a: 'x' } });
    expect(invalid.error_code).toBe('invalid_params');
  });

  it('accepts a legacy config.yml (id, description, default parameters) with one capability "run"', async () => {
    plugin('legacy', {
      'config.yml': 'id: legacy\ndescription: An old-style plugin that echoes.\nparameters: { greeting: hello }\napi_base: http://example.invalid\n',
      'index.js': 'export function run(params, ctx) { return ctx.config.default_parameters.greeting + " " + (params.user_input ?? ""); }',
    });
    await startLoader();
    const record = registry.get('legacy')!;
    expect(record.descriptor.capabilities.map((c) => c.id)).toEqual(['run']);
    expect(record.descriptor.config).toMatchObject({ default_parameters: { greeting: 'hello' }, api_base: 'http://example.invalid' });
    expect(await dispatcher!.invoke({ plugin_id: 'legacy', parameters: { user_input: 'there' } })).toMatchObject({ success: true, text: 'hello there' });
  });

  it('registers http/subprocess manifests found in a folder, with the folder in config', async () => {
    const dir = plugin('lamp', {
      'plugin.yaml': 'id: lamp\nname: Lamp\ndescription: Turns the lamp on.\ntype: subprocess\nconfig: { command: node, args: [lamp.js] }\n',
    });
    await startLoader();
    const record = registry.get('lamp')!;
    expect(record).toMatchObject({ owner: 'builtin', state: 'online' });
    expect(record.descriptor).toMatchObject({ type: 'subprocess', source: 'built-in' });
    expect(record.descriptor.config).toMatchObject({ command: 'node', args: ['lamp.js'], plugin_dir: dir });
    expect(loader!.adapter.isInstalled('lamp')).toBe(false);
  });
});

describe('built-in loader: failures never stop the Core', () => {
  it('reports a YAML syntax error with state error, and loads the other plugins', async () => {
    plugin('broken', { 'plugin.yaml': 'id: broken\ndescription: [unclosed\n', 'index.mjs': 'export function run() { return "x"; }' });
    plugin('fine', { 'plugin.yaml': 'id: fine\nname: Fine\ndescription: Works.\n', 'index.mjs': 'export function run() { return "ok"; }' });
    await startLoader();
    const broken = registry.get('broken')!;
    expect(broken.state).toBe('error');
    expect(broken.state_reason).toContain('plugin.yaml is not valid YAML');
    expect(registry.get('fine')!.state).toBe('online');
    expect(logLines.some((l) => l.includes('Failed to load built-in plugin broken'))).toBe(true);
    const refused = await dispatcher!.invoke({ plugin_id: 'broken' });
    expect(refused.success).toBe(false);
  });

  it('reports a manifest without a description', async () => {
    plugin('nodesc', { 'plugin.yaml': 'id: nodesc\nname: No description\n', 'index.mjs': 'export function run() { return "x"; }' });
    await startLoader();
    expect(registry.get('nodesc')).toMatchObject({ state: 'error', state_reason: expect.stringContaining('description') });
  });

  it('reports a module that throws on import', async () => {
    plugin('explodes', { 'plugin.yaml': 'id: explodes\nname: X\ndescription: Throws on import.\n', 'index.mjs': 'throw new Error("kaboom at import");' });
    await startLoader();
    expect(registry.get('explodes')).toMatchObject({ state: 'error', state_reason: expect.stringContaining('kaboom at import') });
    expect(loader!.status().find((s) => s.plugin_id === 'explodes')?.state).toBe('error');
  });

  it('reports a module whose import never finishes, and still loads the rest', async () => {
    plugin('stalls', {
      'plugin.yaml': 'id: stalls\nname: S\ndescription: Top-level await that never settles.\n',
      'index.mjs': 'await new Promise(() => {});\nexport function run() { return "never"; }',
    });
    plugin('fine', { 'plugin.yaml': 'id: fine\nname: Fine\ndescription: Works.\n', 'index.mjs': 'export function run() { return "ok"; }' });
    const started = Date.now();
    await startLoader(false, 300);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(registry.get('stalls')).toMatchObject({ state: 'error', state_reason: expect.stringContaining('did not finish within 300 ms') });
    expect(await dispatcher!.invoke({ plugin_id: 'fine' })).toMatchObject({ success: true, text: 'ok' });
  });

  it('reports a capability without a handler', async () => {
    plugin('partial', { 'plugin.yaml': GREETER_YAML.replace('id: greeter', 'id: partial'), 'index.mjs': 'export function greet() { return "hi"; }' });
    await startLoader();
    expect(registry.get('partial')).toMatchObject({ state: 'error', state_reason: expect.stringContaining('"context_probe"') });
  });

  it('turns a handler that throws into an error result', async () => {
    plugin('thrower', {
      'plugin.yaml': 'id: thrower\nname: T\ndescription: Throws.\n',
      'index.mjs': 'export function run() { throw new Error("handler broke"); }',
    });
    await startLoader();
    const result = await dispatcher!.invoke({ plugin_id: 'thrower' });
    expect(result).toMatchObject({ success: false, error_code: 'plugin_error' });
    expect(result.error).toContain('handler broke');
    expect(registry.get('thrower')!.state).toBe('online');
  });

  it('turns a hanging handler into a timeout, aborts its signal, and keeps serving', async () => {
    plugin('hangs', {
      'plugin.yaml':
        'id: hangs\nname: H\ndescription: Never returns unless told.\ncapabilities:\n  - { id: hang, name: Hang, description: Hangs, parameters: [] }\n  - { id: quick, name: Quick, description: Answers, parameters: [] }\n',
      'index.mjs': `
        export const seen = { aborted: false };
        export function hang(params, ctx) { ctx.signal.addEventListener('abort', () => { globalThis.__hcHangAborted = true; }); return new Promise(() => {}); }
        export function quick() { return 'still here'; }`,
    });
    await startLoader();
    const started = Date.now();
    const result = await dispatcher!.invoke({ plugin_id: 'hangs', capability_id: 'hang', timeout_sec: 0.3 });
    expect(result).toMatchObject({ success: false, error_code: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2000);
    expect((globalThis as { __hcHangAborted?: boolean }).__hcHangAborted).toBe(true);
    expect(await dispatcher!.invoke({ plugin_id: 'hangs', capability_id: 'quick' })).toMatchObject({ success: true, text: 'still here' });
  });

  it('refuses a second folder claiming an id already loaded', async () => {
    plugin('a-first', { 'plugin.yaml': 'id: twin\nname: A\ndescription: First.\n', 'index.mjs': 'export function run() { return "first"; }' });
    plugin('b-second', { 'plugin.yaml': 'id: twin\nname: B\ndescription: Second.\n', 'index.mjs': 'export function run() { return "second"; }' });
    await startLoader();
    expect(await dispatcher!.invoke({ plugin_id: 'twin' })).toMatchObject({ success: true, text: 'first' });
    expect(loader!.status().find((s) => s.folder.endsWith('b-second'))).toMatchObject({ state: 'error', error: expect.stringContaining('already used') });
  });

  it('removes built-in records whose folder vanished while the Core was down', async () => {
    registry.register({
      descriptor: { id: 'ghost', name: 'Ghost', description: 'gone', capabilities: [], source: 'built-in', type: 'inline', config: {} },
      owner: 'builtin',
    });
    registry.register({
      descriptor: { id: 'external', name: 'Ext', description: 'api', capabilities: [], source: 'external', type: 'http', config: {} },
      owner: 'api',
    });
    await startLoader();
    expect(registry.get('ghost')).toBeUndefined();
    expect(registry.get('external')).toBeDefined();
  });
});

describe('built-in loader: hot reload', () => {
  it('adds, changes and deletes plugins without a restart', async () => {
    await startLoader(true);
    expect(registry.list()).toHaveLength(0);

    const dir = plugin('live', {
      'plugin.yaml': 'id: live\nname: Live\ndescription: Version one.\nversion: "1.0.0"\n',
      'index.mjs': 'export function run() { return "v1"; }',
    });
    await waitFor(() => registry.get('live')?.state === 'online', 10_000);
    expect(await dispatcher!.invoke({ plugin_id: 'live' })).toMatchObject({ text: 'v1' });

    // New code is imported (cache-busting query), not served from the module cache.
    rewrite(join(dir, 'index.mjs'), 'export function run() { return "v2"; }');
    await waitFor(async () => (await dispatcher!.invoke({ plugin_id: 'live' })).text === 'v2', 10_000);

    writeFileSync(join(dir, 'plugin.yaml'), 'id: live\nname: Live\ndescription: Version three.\nversion: "3.0.0"\n');
    await waitFor(() => registry.get('live')?.descriptor.version === '3.0.0', 10_000);
    expect(registry.get('live')!.descriptor.description).toBe('Version three.');

    // A broken edit puts the plugin in error; fixing it brings it back.
    writeFileSync(join(dir, 'plugin.yaml'), 'id: live\nname: Live\ndescription: [broken\n');
    await waitFor(() => registry.get('live')?.state === 'error', 10_000);
    writeFileSync(join(dir, 'plugin.yaml'), 'id: live\nname: Live\ndescription: Fixed.\nversion: "4.0.0"\n');
    await waitFor(() => registry.get('live')?.state === 'online', 10_000);

    rmSync(dir, { recursive: true, force: true });
    await waitFor(() => registry.get('live') === undefined, 10_000);
    expect(loader!.adapter.isInstalled('live')).toBe(false);
  });
});
