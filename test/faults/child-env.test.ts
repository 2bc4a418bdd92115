// Attack: a plugin started by the Core reads the Core's secrets from its environment (the admin token,
// the LLM key, the broker password). Defence: subprocess plugins and MCP stdio servers start with
// PATH, HOME, LANG, TZ and only what their manifest's `env` lists.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PluginResult } from '../../src/protocol/types.js';
import { ensureBuilt } from '../helpers/build.js';
import { coreProcessEnv } from '../helpers/core-process-env.js';
import { api, startCoreProcess, type CoreProcess } from '../helpers/core-process.js';

const root = resolve(import.meta.dirname, '..', '..');
const envDump = join(root, 'test', 'fixtures', 'faults', 'env-dump.mjs');
const everything = join(root, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

const SECRETS: Record<string, string> = {
  HOMECLAW_ADMIN_TOKEN: 'core-admin-token-secret-0123456789',
  HOMECLAW_LLM_API_KEY: 'sk-llm-secret-value',
  HOMECLAW_BROKER_PASSWORD: 'broker-password-secret',
  HOMECLAW_PLUGIN_PASSWORD: 'plugin-password-secret',
  OPENAI_API_KEY: 'sk-openai-secret-value',
  WEATHER_API_KEY: 'weather-secret-value',
};
const ALLOWED = ['HOME', 'LANG', 'PATH', 'PLUGIN_SETTING', 'TZ'];

function expectNoSecrets(env: Record<string, string>): void {
  const leaked = Object.keys(env).filter((key) => /^HOMECLAW_/.test(key) || /_API_KEY$/.test(key));
  expect(leaked).toEqual([]);
  for (const secret of Object.values(SECRETS)) expect(Object.values(env)).not.toContain(secret);
  expect(Object.keys(env).sort()).toEqual(ALLOWED);
  expect(env.PLUGIN_SETTING).toBe('from-manifest');
  expect(env.LANG).toBe('C.UTF-8');
  expect(env.TZ).toBe('Europe/Berlin');
  expect(env.PATH).toBe(process.env.PATH);
}

describe('child processes of the Core', () => {
  let dataDir: string;
  let core: CoreProcess;
  let baseUrl: string;

  beforeAll(async () => {
    await ensureBuilt();
    dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-child-env-'));
    const pluginsDir = join(dataDir, 'plugins');
    mkdirSync(join(pluginsDir, 'envdump'), { recursive: true });
    writeFileSync(
      join(pluginsDir, 'envdump', 'plugin.yaml'),
      [
        'id: envdump',
        'name: Environment dump',
        'description: Prints its environment.',
        'type: subprocess',
        `config: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(envDump)}], env: { PLUGIN_SETTING: from-manifest } }`,
        'capabilities:',
        '  - { id: dump, name: Dump, description: Print the environment, parameters: [] }',
      ].join('\n'),
    );
    mkdirSync(join(pluginsDir, 'everything'));
    writeFileSync(
      join(pluginsDir, 'everything', 'plugin.yaml'),
      [
        'id: everything',
        'name: Everything',
        'description: The MCP reference server.',
        'type: mcp',
        `config: { transport: stdio, command: node, args: [${JSON.stringify(everything)}, stdio], env: { PLUGIN_SETTING: from-manifest } }`,
      ].join('\n'),
    );
    const env = await coreProcessEnv(dataDir, pluginsDir, { ...SECRETS, LANG: 'C.UTF-8', TZ: 'Europe/Berlin' });
    baseUrl = env.HOMECLAW_URL as string;
    core = await startCoreProcess(env);
  });

  afterAll(async () => {
    if (core) await core.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a subprocess plugin gets PATH, HOME, LANG, TZ and its manifest env, no HOMECLAW_* or *_API_KEY', async () => {
    const { status, body } = await api<PluginResult>(baseUrl, SECRETS.HOMECLAW_ADMIN_TOKEN!, 'POST', '/v1/plugins/envdump/tools/dump/run', {});
    expect(status, JSON.stringify(body)).toBe(200);
    expectNoSecrets((body.data as { env: Record<string, string> }).env);
  });

  it('an MCP stdio server gets the same minimal environment', async () => {
    let result: { status: number; body: PluginResult } | undefined;
    // The server's tools are listed once it is connected; until then the plugin is not routable.
    for (let i = 0; i < 100; i++) {
      result = await api<PluginResult>(baseUrl, SECRETS.HOMECLAW_ADMIN_TOKEN!, 'POST', '/v1/plugins/everything/tools/get-env/run', {});
      if (result.status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(result?.status, JSON.stringify(result?.body)).toBe(200);
    expectNoSecrets(JSON.parse(result!.body.text ?? '{}') as Record<string, string>);
  });
});
