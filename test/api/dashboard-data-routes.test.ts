// The small read routes the dashboard needs: who a credential is (any valid token), a plugin's
// capabilities with their JSON Schemas and effective confirmation rule (admin), and the newest audit
// entry of each plugin (admin). Answers are checked against the OpenAPI document too.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiSchemas } from '../../src/api/openapi.js';
import { startTestCore, type TestCore } from '../helpers/core.js';

let core: TestCore;
let aliceToken: string;
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema({ components: { schemas: openApiSchemas() } }, 'openapi.json');
const valid = (component: string, value: unknown): boolean => {
  const validate = ajv.compile({ $ref: `openapi.json#/components/schemas/${component}` });
  const ok = validate(value);
  if (!ok) throw new Error(`${component}: ${JSON.stringify(validate.errors)}`);
  return ok;
};

const ECHO = 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.stringify({success:true,text:"done"})))';
const GARAGE = {
  id: 'garage',
  name: 'Garage',
  description: 'The garage door.',
  type: 'subprocess',
  config: { command: process.execPath, args: ['-e', ECHO] },
  capabilities: [
    {
      id: 'open',
      name: 'Open',
      description: 'Open it.',
      requires_confirmation: true,
      parameters: [{ name: 'minutes', type: 'integer', required: false, description: 'Close after.' }],
    },
    {
      id: 'light',
      name: 'Light',
      description: 'Switch the light.',
      parameters: [
        { name: 'on', type: 'boolean' },
        { name: 'colour', type: 'string', enum: ['warm', 'cold'], required: false },
      ],
    },
    { id: 'delete_log', name: 'Delete log', description: 'Clear the log.', parameters: [] },
  ],
};

beforeAll(async () => {
  core = await startTestCore({ overrides: { policy: { require_confirmation: ['*.delete_*'] } } });
  aliceToken = (await core.api<{ token: string }>('POST', '/api/users', { user_id: 'alice' })).body.token;
  expect((await core.api('POST', '/api/plugins/register', GARAGE)).status).toBe(201);
});

afterAll(async () => {
  await core?.cleanup();
});

const get = (path: string, token?: string): Promise<Response> =>
  fetch(`${core.httpUrl}${path}`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });

describe('GET /api/whoami', () => {
  it('names the admin, a user, and refuses anyone else', async () => {
    const admin = await get('/api/whoami', core.adminToken);
    expect(admin.headers.get('cache-control')).toBe('no-store');
    const adminBody = await admin.json();
    expect(adminBody).toEqual({ kind: 'admin', via: 'token' });
    expect(valid('Whoami', adminBody)).toBe(true);
    const user = await (await get('/api/whoami', aliceToken)).json();
    expect(user).toEqual({ kind: 'user', via: 'token', user_id: 'alice' });
    expect(valid('Whoami', user)).toBe(true);
    expect((await get('/api/whoami')).status).toBe(401);
    expect((await get('/api/whoami', 'hcu_not-a-real-token')).status).toBe(401);
  });
});

describe('GET /api/plugins/:id/capabilities', () => {
  it('gives each capability its JSON Schema and whether a call must be confirmed (descriptor or policy)', async () => {
    const res = await get('/api/plugins/garage/capabilities', core.adminToken);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      plugin_id: string;
      capabilities: { id: string; requires_confirmation: boolean; input_schema: Record<string, unknown> }[];
    };
    expect(valid('PluginCapabilities', body)).toBe(true);
    expect(body.plugin_id).toBe('garage');
    const byId = Object.fromEntries(body.capabilities.map((c) => [c.id, c]));
    expect(byId['open']?.requires_confirmation).toBe(true);
    expect(byId['delete_log']?.requires_confirmation).toBe(true);
    expect(byId['light']?.requires_confirmation).toBe(false);
    expect(byId['light']?.input_schema).toMatchObject({
      type: 'object',
      required: ['on'],
      properties: { on: { type: 'boolean' }, colour: { type: 'string', enum: ['warm', 'cold'] } },
    });
    // The schema is the one the direct invoke validates against: what it refuses, the route refuses.
    const refused = await core.api<{ error_code: string }>('POST', '/v1/plugins/garage/tools/light/run', { on: true, colour: 'green' });
    expect(refused.status).toBe(400);
    expect(refused.body.error_code).toBe('invalid_params');
  });

  it('answers 404 for an unknown plugin and 403 to a user token', async () => {
    expect((await get('/api/plugins/nope/capabilities', core.adminToken)).status).toBe(404);
    expect((await get('/api/plugins/garage/capabilities', aliceToken)).status).toBe(403);
  });
});

describe('GET /api/audit/last', () => {
  it('gives the newest entry of each plugin, refused calls included', async () => {
    expect((await core.api('POST', '/v1/plugins/garage/tools/light/run', { on: true })).status).toBe(200);
    expect((await core.api('POST', '/v1/plugins/garage/tools/open/run', {})).status).toBe(428);
    const lamp = { ...GARAGE, id: 'lamp', name: 'Lamp' };
    expect((await core.api('POST', '/api/plugins/register', lamp)).status).toBe(201);
    expect((await core.api('POST', '/v1/plugins/lamp/tools/light/run', { on: false })).status).toBe(200);
    const res = await get('/api/audit/last', core.adminToken);
    const body = (await res.json()) as { count: number; entries: { plugin_id: string; capability_id: string; outcome: string }[] };
    expect(valid('AuditList', body)).toBe(true);
    const byPlugin = Object.fromEntries(body.entries.map((e) => [e.plugin_id, e]));
    expect(byPlugin['garage']).toMatchObject({ capability_id: 'open', outcome: 'confirmation_required' });
    expect(byPlugin['lamp']).toMatchObject({ capability_id: 'light', outcome: 'ok' });
    expect(body.entries.filter((e) => e.plugin_id === 'garage')).toHaveLength(1);
    expect(body.entries[0]?.plugin_id).toBe('lamp');
    expect((await get('/api/audit/last', aliceToken)).status).toBe(403);
  });
});
