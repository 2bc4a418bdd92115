// Attack: only one token existed, the admin's, so every household member who was given HTTP access
// could act as anyone and reach every route. Defence: per-user tokens (`homeclaw users add <id>`, shown
// once, stored hashed) that may call POST /api/messages, GET/PUT /api/profiles/<own id>, plugin search
// and /mcp, only as their user; every other route answers 403. The admin token may act for anyone.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChannelMessageOut } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { ensureBuilt, makePluginsDir } from '../e2e/helpers.js';
import { callApi, homeclaw, mcpClient } from './identity-helpers.js';

let core: TestCore;
let env: Record<string, string>;
let aliceToken: string;

beforeAll(async () => {
  await ensureBuilt();
  core = await startTestCore({ pluginsDir: makePluginsDir({ shipped: [{ id: 'time' }] }) });
  env = { HOMECLAW_URL: core.httpUrl, HOMECLAW_ADMIN_TOKEN: core.adminToken };
}, 120_000);

afterAll(async () => {
  await core?.cleanup();
});

const as = <T = Record<string, unknown>>(token: string | undefined, method: string, path: string, body?: unknown) =>
  callApi<T>(core.httpUrl, token, method, path, body);

describe('per-user HTTP tokens', () => {
  it('`homeclaw users add` prints the token once; only its hash is stored; `users list` shows no secret', async () => {
    const added = await homeclaw(['users', 'add', 'alice'], env);
    expect(added.code, added.stderr).toBe(0);
    const token = /token: (\S+)/.exec(added.stdout)?.[1];
    expect(token).toMatch(/^hcu_[A-Za-z0-9_-]{40,}$/);
    aliceToken = token!;
    expect(added.stdout).toMatch(/shown only once/);

    const listed = await homeclaw(['users', 'list'], env);
    expect(listed.stdout).toContain('alice');
    expect(listed.stdout).not.toContain(aliceToken);
    const db = readFileSync(join(core.dataDir, 'homeclaw.db'));
    const wal = readFileSync(join(core.dataDir, 'homeclaw.db-wal'));
    expect(db.includes(aliceToken)).toBe(false);
    expect(wal.includes(aliceToken)).toBe(false);

    const again = await homeclaw(['users', 'add', 'alice'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/alice.*already/);
    const bad = await homeclaw(['users', 'add', 'not a user!'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/user id/);
  });

  it('a user token sends messages only as its user', async () => {
    const own = await as<ChannelMessageOut>(aliceToken, 'POST', '/api/messages', { channel: 'web', user_id: 'alice', text: '/time now timezone=UTC' });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ kind: 'answer', plugin_id: 'time', user_id: 'alice' });
    const implicit = await as<ChannelMessageOut>(aliceToken, 'POST', '/api/messages', { channel: 'web', text: '/time now timezone=UTC' });
    expect(implicit.status).toBe(200);
    expect(implicit.body.user_id).toBe('alice');

    const invoked = core.ctx.dispatcher.getStats().invoked;
    const forged = await as<{ message: string }>(aliceToken, 'POST', '/api/messages', { channel: 'web', user_id: 'bob', text: '/time now' });
    expect(forged.status).toBe(403);
    expect(forged.body.message).toMatch(/acts as "alice".*"bob"/);
    expect(core.ctx.dispatcher.getStats().invoked).toBe(invoked);
  });

  it('a user token reads and writes only its own profile (GET/PUT), the admin token any', async () => {
    await core.api('POST', '/api/profiles/bob', { set: { address: '9 Elm St' } });
    const put = await as<{ profile: Record<string, unknown> }>(aliceToken, 'PUT', '/api/profiles/alice', { profile: { name: 'Alice', address: '12 Oak St' } });
    expect(put.status).toBe(200);
    expect(put.body.profile).toEqual({ name: 'Alice', address: '12 Oak St' });
    const replaced = await as<{ profile: Record<string, unknown> }>(aliceToken, 'PUT', '/api/profiles/alice', { profile: { name: 'Alice A.' } });
    expect(replaced.body.profile).toEqual({ name: 'Alice A.' });
    expect((await as(aliceToken, 'GET', '/api/profiles/alice')).status).toBe(200);

    const readBob = await as<{ message: string }>(aliceToken, 'GET', '/api/profiles/bob');
    expect(readBob.status).toBe(403);
    expect(readBob.body.message).toContain('alice');
    const writeBob = await as(aliceToken, 'PUT', '/api/profiles/bob', { profile: { address: 'evil' } });
    expect(writeBob.status).toBe(403);
    const postBob = await as(aliceToken, 'POST', '/api/profiles/bob', { set: { address: 'evil' } });
    expect(postBob.status).toBe(403);
    expect(core.ctx.profiles.get('bob')).toEqual({ address: '9 Elm St' });

    const badPut = await as(aliceToken, 'PUT', '/api/profiles/alice', { profile: 'nope' });
    expect(badPut.status).toBe(400);
    expect(core.ctx.profiles.get('alice')).toEqual({ name: 'Alice A.' });
    const adminPut = await core.api<{ profile: Record<string, unknown> }>('PUT', '/api/profiles/bob', { profile: { address: '10 Elm St' } });
    expect(adminPut.body.profile).toEqual({ address: '10 Elm St' });
  });

  it('a user token may search plugins and nothing else: every other route is 403', async () => {
    expect((await as(aliceToken, 'GET', '/api/plugins/search?q=time')).status).toBe(200);
    const refused: [string, string, unknown?][] = [
      ['GET', '/api/plugins'],
      ['GET', '/api/status'],
      ['GET', '/api/credentials'],
      ['POST', '/api/credentials', { name: 'evil', role: 'admin' }],
      [
        'POST',
        '/api/plugins/register',
        { id: 'evil', name: 'E', description: 'e', type: 'http', health_check_url: 'http://127.0.0.1:1/h', config: { base_url: 'http://127.0.0.1:1' } },
      ],
      ['POST', '/v1/plugins/time/tools/now/run', {}],
      ['GET', '/api/users'],
      ['POST', '/api/users', { user_id: 'mallory' }],
      ['GET', '/api/audit'],
    ];
    for (const [method, path, body] of refused) {
      const res = await as<{ message: string }>(aliceToken, method, path, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.message, `${method} ${path}`).toMatch(/admin token/);
    }
    expect(core.ctx.credentials.get('evil')).toBeUndefined();
    expect(core.ctx.registry.get('evil')).toBeUndefined();
  });

  it('/mcp with a user token acts as that user', async () => {
    const client = await mcpClient(core.httpUrl, aliceToken);
    try {
      const result = await client.callTool({ name: 'time__now', arguments: { timezone: 'UTC' } });
      expect(result.isError).toBeFalsy();
      await core.ctx.audit.flush();
      const entries = core.ctx.audit.query({ user: 'alice', plugin: 'time', limit: 10 });
      expect(entries[0]).toMatchObject({ user_id: 'alice', channel: 'mcp', plugin_id: 'time', capability_id: 'now', outcome: 'ok' });
    } finally {
      await client.close();
    }
  });

  it('an unknown, removed or garbled token is refused (401)', async () => {
    expect((await as(undefined, 'GET', '/api/plugins/search?q=x')).status).toBe(401);
    expect((await as('hcu_not-a-real-token-000000000000000000000000', 'GET', '/api/plugins/search?q=x')).status).toBe(401);
    const removed = await homeclaw(['users', 'remove', 'alice'], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect((await as(aliceToken, 'GET', '/api/plugins/search?q=x')).status).toBe(401);
    const missing = await homeclaw(['users', 'remove', 'alice'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no user "alice"/);
  });
});
