// Every tool the real Core lists — the shipped built-ins, the MCP reference servers (everything,
// filesystem, memory) and a server with awkward schemas proxied through the MCP adapter, HTTP plugins
// with loose parameters — is readable by Home Assistant's MCP client (the converter rules of
// test/helpers/ha-schema-check.ts, patterns compiled by Python's re), over /mcp and over `homeclaw mcp`.
// Tool names are the same on every listing and after a restart; colliding names stay distinct.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { haSchemaReport, patternsPythonRejects } from '../helpers/ha-schema-check.js';
import { ensureBuilt } from '../fixtures/mcp/core-harness.js';
import { FIXTURES, referenceServerEntry } from '../fixtures/mcp/harness.js';
import { SHIPPED_PLUGINS_DIR } from '../e2e/helpers.js';

const MCP_PLUGINS = ['everything', 'files', 'memory', 'awkward'];
let stdioEntry: string;
let dataDir: string;
let workDir: string;
let core: TestCore;

function mcpPlugin(id: string, args: string[], env: Record<string, string> = {}): Record<string, unknown> {
  return { id, name: id, description: `MCP server ${id}`, type: 'mcp', config: { transport: 'stdio', command: process.execPath, args, env } };
}

function commandPlugin(id: string, capabilities: Record<string, unknown>[]): Record<string, unknown> {
  return {
    id,
    name: id,
    description: `Command plugin ${id}`,
    type: 'subprocess',
    config: { command: process.execPath, args: ['-e', 'process.stdin.resume()'] },
    capabilities,
  };
}

async function startCore(): Promise<TestCore> {
  const started = await startTestCore({ dataDir, pluginsDir: SHIPPED_PLUGINS_DIR });
  const deadline = Date.now() + 30_000;
  // MCP plugins get their capabilities when the adapter has listed the server's tools.
  while (
    !MCP_PLUGINS.every((id) => started.ctx.registry.get(id)?.state === 'online' && (started.ctx.registry.get(id)?.descriptor.capabilities.length ?? 0) > 0)
  ) {
    if (Date.now() > deadline) throw new Error('MCP plugins did not come online');
    await new Promise((r) => setTimeout(r, 100));
  }
  return started;
}

async function listOverHttp(): Promise<Tool[]> {
  const client = new Client({ name: 'ha-like', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${core.httpUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${core.adminToken}` } } }),
  );
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

async function listOverStdio(): Promise<Tool[]> {
  const client = new Client({ name: 'desktop', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [stdioEntry],
      env: { HOMECLAW_URL: core.httpUrl, HOMECLAW_ADMIN_TOKEN: core.adminToken, HOMECLAW_LOG_LEVEL: 'warn' },
      stderr: 'ignore',
    }),
  );
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  stdioEntry = await ensureBuilt();
  dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-ha-schemas-'));
  workDir = mkdtempSync(join(tmpdir(), 'homeclaw-ha-files-'));
  core = await startTestCore({ dataDir, pluginsDir: SHIPPED_PLUGINS_DIR });
  const register = async (body: Record<string, unknown>): Promise<void> => {
    const res = await core.api('POST', '/api/plugins/register', body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  };
  await register(mcpPlugin('everything', [referenceServerEntry('server-everything'), 'stdio']));
  await register(mcpPlugin('files', [referenceServerEntry('server-filesystem'), workDir]));
  await register(mcpPlugin('memory', [referenceServerEntry('server-memory')], { MEMORY_FILE_PATH: join(workDir, 'memory.jsonl') }));
  await register(mcpPlugin('awkward', [join(FIXTURES, 'awkward-schemas-server.mjs')]));
  await register(
    commandPlugin('gadgets', [
      {
        id: 'configure',
        name: 'Configure',
        description: 'Loose HomeClaw parameters',
        parameters: [
          { name: 'ids', type: 'array' },
          { name: 'settings', type: 'object', required: false },
          { name: 'level', type: 'integer', enum: [1, 2, 3], required: false },
        ],
      },
    ]),
  );
  // `<plugin>__<capability>` is ambiguous: both of these would be "lamp__kitchen__on".
  await register(commandPlugin('lamp__kitchen', [{ id: 'on', name: 'On', description: 'kitchen lamp on', parameters: [] }]));
  await register(commandPlugin('lamp', [{ id: 'kitchen__on', name: 'Kitchen on', description: 'lamp kitchen mode', parameters: [] }]));
  await core.stop();
  core = await startCore();
}, 180_000);

afterAll(async () => {
  await core?.cleanup();
  rmSync(workDir, { recursive: true, force: true });
});

describe('tool schemas Home Assistant can read', () => {
  let tools: Tool[];

  it("every tool listed at /mcp converts under every release of Home Assistant's converter", async () => {
    tools = await listOverHttp();
    const names = tools.map((t) => t.name);
    // Built-ins, the three reference servers, the awkward server, the command plugins and find_plugins are all there.
    for (const name of [
      'find_plugins',
      'buy__place_order',
      'time__now',
      'everything__echo',
      'files__read_multiple_files',
      'memory__create_entities',
      'awkward__set_scene',
      'awkward__log_event',
      'gadgets__configure',
    ]) {
      expect(names).toContain(name);
    }
    expect(names.filter((n) => n.startsWith('everything__')).length).toBeGreaterThan(5);
    const problems: string[] = [];
    const patterns: string[] = [];
    for (const tool of tools) {
      const report = haSchemaReport(tool.inputSchema);
      problems.push(...report.problems.map((p) => `${tool.name} ${p}`));
      patterns.push(...report.patterns);
      expect(tool.inputSchema.type, tool.name).toBe('object');
    }
    expect(problems).toEqual([]);
    expect(await patternsPythonRejects(patterns)).toEqual([]);
    // What the plugins declared is what the checker would have refused: the rewrite is doing the work.
    const declared = ['everything', 'files', 'awkward', 'gadgets'].flatMap((id) =>
      core.ctx.registry.get(id)!.descriptor.capabilities.map((c) => c.input_schema ?? null),
    );
    expect(declared.filter((schema) => schema !== null && haSchemaReport(schema).problems.length > 0).length).toBeGreaterThan(2);
  });

  it('the rewritten schemas keep what a model needs: required fields, enums, nullability, defaults', () => {
    const scene = tools.find((t) => t.name === 'awkward__set_scene')!.inputSchema as Record<string, any>;
    expect(scene.required).toEqual(['lights', 'mode']);
    expect(scene.properties.mode).toMatchObject({ type: 'string', enum: ['relax', 'focus', 'party'] });
    expect(scene.properties.lights.items).toMatchObject({
      type: 'object',
      required: ['entity'],
      properties: { entity: { type: 'string' }, brightness: { type: 'integer', nullable: true, minimum: 0, maximum: 255 } },
    });
    const configure = tools.find((t) => t.name === 'gadgets__configure')!.inputSchema as Record<string, any>;
    expect(configure.properties).toMatchObject({
      ids: { type: 'array', items: { type: 'string' } },
      settings: { type: 'object', additionalProperties: true },
      level: { type: 'integer', enum: [1, 2, 3] },
    });
    const files = tools.find((t) => t.name === 'files__read_multiple_files')!.inputSchema as Record<string, any>;
    expect(files.properties.paths).toEqual({ type: 'array', items: { type: 'string' }, description: expect.stringContaining('Array of file paths') });
  });

  it("calls still go through with the plugin's own schema: valid arguments pass, invalid ones are refused by the Core", async () => {
    const client = new Client({ name: 'ha-like', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${core.httpUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${core.adminToken}` } } }),
    );
    try {
      const ok = await client.callTool({ name: 'awkward__set_scene', arguments: { lights: [{ entity: 'light.desk', brightness: null }], mode: 'focus' } });
      expect(ok.isError).toBeFalsy();
      expect(JSON.stringify(ok.content)).toContain('light.desk');
      // The portable schema no longer says minItems: 1, the plugin's schema still does.
      const empty = await client.callTool({ name: 'awkward__set_scene', arguments: { lights: [], mode: 'focus' } });
      expect(empty.isError).toBe(true);
      expect(JSON.stringify(empty.content)).toContain('invalid_params');
      const sum = await client.callTool({ name: 'everything__get-sum', arguments: { a: 2, b: 3 } });
      expect(JSON.stringify(sum.content)).toContain('5');
    } finally {
      await client.close();
    }
  });

  it('`homeclaw mcp` lists the same tools with the same schemas', async () => {
    const viaStdio = await listOverStdio();
    expect(viaStdio.map((t) => [t.name, t.inputSchema])).toEqual(tools.map((t) => [t.name, t.inputSchema]));
  });

  it('tool names are stable across listings and a restart; colliding names stay distinct', async () => {
    const names = tools.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    const lamps = names.filter((n) => n.startsWith('lamp'));
    expect(lamps).toHaveLength(2);
    for (const name of lamps) expect(name).toMatch(/^lamp__kitchen__on_[0-9a-f]{8}$/);
    expect(tools.find((t) => t.name.startsWith('awkward__move'))!.name).toMatch(/^awkward__move_cover_v2_[0-9a-f]{8}$/);

    expect((await listOverHttp()).map((t) => t.name)).toEqual(names);
    await core.stop();
    core = await startCore();
    const afterRestart = await listOverHttp();
    expect(afterRestart.map((t) => t.name)).toEqual(names);
    expect(afterRestart.map((t) => t.inputSchema)).toEqual(tools.map((t) => t.inputSchema));
  });
});
