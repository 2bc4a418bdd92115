// Parameter defaults on every path, on the real Core with the shipped buy plugin and a
// config.yml with presets (default_parameters, per capability too): a direct call that leaves out what config
// provides succeeds the same way over the HTTP run route, `homeclaw invoke`, MCP, the MQTT front door
// and the conversation.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import type { PluginResult } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { connectTestClient, type TestClient } from '../helpers/mqtt-client.js';
import { REPO_ROOT, channelUser, ensureBuilt, makePluginsDir } from './helpers.js';

// Plugin-level presets plus a per-capability address, as a user would write config.yml.
const SEED_CONFIG = `default_parameters:
  address: "123 Main St, City"
  contact_name: "John"
  phone: "555-0000"
  payment_method: "card"
capabilities:
  place_order:
    default_parameters:
      address: "123 Main St"
use_defaults_directly: true
`;
const EXPECTED = /^Order placed for milk: delivery to 123 Main St for John \(phone 555-0000\), paying by card\. Order id /;

let core: TestCore;

beforeAll(async () => {
  await ensureBuilt();
  core = await startTestCore({ pluginsDir: makePluginsDir({ shipped: [{ id: 'buy', config: SEED_CONFIG }] }) });
}, 180_000);

afterAll(async () => {
  await core?.cleanup();
});

describe('defaults from config on every path', () => {
  it('HTTP run route: {item: milk} is enough', async () => {
    const res = await core.api<PluginResult>('POST', '/v1/plugins/buy/tools/place_order/run', { item: 'milk' });
    expect(res.status).toBe(200);
    expect(res.body.text).toMatch(EXPECTED);
  });

  it('homeclaw invoke buy place_order item=milk', async () => {
    const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [join(REPO_ROOT, 'dist', 'src', 'cli.js'), 'invoke', 'buy', 'place_order', 'item=milk'],
        { env: { ...process.env, HOMECLAW_URL: core.httpUrl, HOMECLAW_ADMIN_TOKEN: core.adminToken }, timeout: 30_000 },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 99) : 0, stdout: stdout.trim(), stderr: stderr.trim() }),
      );
    });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(EXPECTED);
  });

  it('MCP tools/call buy__place_order with only the item', async () => {
    const client = new Client({ name: 'defaults-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${core.httpUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${core.adminToken}` } },
      }),
    );
    try {
      const result = (await client.callTool({ name: 'buy__place_order', arguments: { item: 'milk' } })) as { isError?: boolean; content: { text: string }[] };
      expect(result.isError).toBeFalsy();
      expect(result.content[0]?.text).toMatch(EXPECTED);
    } finally {
      await client.close();
    }
  });

  it('conversation (slash command): the same order without a question (use_defaults_directly)', async () => {
    const client: TestClient = await connectTestClient(core.mqttUrl, { clientId: 'defaults-user' });
    try {
      await client.subscribe(topics.channelOut('chat'));
      const reply = await channelUser(client, 'chat', 'john').say('/buy place_order item=milk');
      expect(reply.kind).toBe('answer');
      expect(reply.text).toMatch(EXPECTED);
    } finally {
      await client.end();
    }
  });

  it('MQTT front door homeclaw/call/buy/place_order with only the item', async () => {
    const caller: TestClient = await connectTestClient(core.mqttUrl, { clientId: 'defaults-automation' });
    try {
      await caller.subscribe(topics.callResult('order-1'));
      await caller.publish(topics.call('buy', 'place_order'), { request_id: 'order-1', parameters: { item: 'milk' } });
      const result = (await caller.waitFor(topics.callResult('order-1'))).json<PluginResult>();
      expect(result.success).toBe(true);
      expect(result.text).toMatch(EXPECTED);
    } finally {
      await caller.end();
    }
  });

  it('an explicit value still wins, and what config does not provide is still required', async () => {
    const explicit = await core.api<PluginResult>('POST', '/v1/plugins/buy/tools/place_order/run', { item: 'milk', address: '9 Elm St' });
    expect(explicit.body.text).toContain('delivery to 9 Elm St');
    const missing = await core.api<PluginResult>('POST', '/v1/plugins/buy/tools/place_order/run', {});
    expect(missing).toMatchObject({ status: 400, body: { error_code: 'invalid_params', error: expect.stringContaining('missing required parameter "item"') } });
  });
});
