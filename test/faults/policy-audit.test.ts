// Attack: after a door was unlocked nobody could tell who asked, through which channel, or when.
// Defence: every invocation (run or refused) lands in an audit log in SQLite — time, user, channel,
// plugin, capability, outcome, duration, never parameter values — readable by the admin only
// (`homeclaw audit`, GET /api/audit) and capped so it cannot fill the disk.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { connectTestClient, type TestClient } from '../helpers/mqtt-client.js';
import { channelUser, ensureBuilt } from '../e2e/helpers.js';
import { callApi, homeclaw, startLockServer, type LockServer } from './identity-helpers.js';

interface AuditEntry {
  ts: number;
  user_id: string | null;
  channel: string | null;
  plugin_id: string;
  capability_id: string;
  outcome: string;
  duration_ms: number;
}

let core: TestCore;
let lock: LockServer;
let client: TestClient;
let env: Record<string, string>;
const SECRET_DOOR = 'door-7f3a9c-secret-value';

beforeAll(async () => {
  await ensureBuilt();
  lock = await startLockServer('lock');
  core = await startTestCore({ overrides: { policy: { users: { kid: { deny: ['lock'] } } }, access: { audit: { max_entries: 40 } } } });
  expect((await core.api('POST', '/api/plugins/register', lock.descriptor({ requiresConfirmation: false }))).status).toBe(201);
  client = await connectTestClient(core.mqttUrl);
  await client.subscribe(topics.channelOut('home'));
  env = { HOMECLAW_URL: core.httpUrl, HOMECLAW_ADMIN_TOKEN: core.adminToken };
}, 120_000);

afterAll(async () => {
  await client?.end(true);
  await core?.cleanup();
  await lock?.close();
});

describe('the audit log', () => {
  it('records who called what, through which channel, the outcome and the duration, without parameter values', async () => {
    await channelUser(client, 'home', 'alice').say(`/lock unlock door=${SECRET_DOOR}`);
    await channelUser(client, 'home', 'kid').say('/lock unlock door=front');
    await core.api('POST', '/v1/plugins/lock/tools/status/run', {});
    await core.api('POST', '/v1/plugins/lock/tools/unlock/run', { door: 42 });

    const res = await core.api<{ entries: AuditEntry[] }>('GET', '/api/audit?plugin=lock');
    expect(res.status).toBe(200);
    const entries = res.body.entries;
    expect(entries.map((e) => [e.user_id, e.channel, e.capability_id, e.outcome])).toEqual([
      [null, 'http', 'unlock', 'invalid_params'],
      [null, 'http', 'status', 'ok'],
      ['kid', 'home', 'unlock', 'forbidden'],
      ['alice', 'home', 'unlock', 'ok'],
    ]);
    for (const entry of entries) {
      expect(entry.ts).toBeGreaterThan(Date.now() - 60_000);
      expect(entry.duration_ms).toBeGreaterThanOrEqual(0);
    }
    expect(JSON.stringify(res.body)).not.toContain(SECRET_DOOR);
    const files = ['homeclaw.db', 'homeclaw.db-wal'].map((f) => readFileSync(join(core.dataDir, f)));
    expect(files.some((f) => f.includes(`door=${SECRET_DOOR}`))).toBe(false);
    const stored = core.ctx.db.prepare('SELECT * FROM audit_log').all();
    expect(JSON.stringify(stored)).not.toContain(SECRET_DOOR);
  });

  it('filters by user, outcome and time, and limits', async () => {
    const kid = await core.api<{ entries: AuditEntry[] }>('GET', '/api/audit?user=kid');
    expect(kid.body.entries.map((e) => e.outcome)).toEqual(['forbidden']);
    const forbidden = await core.api<{ entries: AuditEntry[] }>('GET', '/api/audit?outcome=forbidden');
    expect(forbidden.body.entries).toHaveLength(1);
    const limited = await core.api<{ entries: AuditEntry[] }>('GET', '/api/audit?limit=2');
    expect(limited.body.entries).toHaveLength(2);
    const future = await core.api<{ entries: AuditEntry[] }>('GET', `/api/audit?since=${new Date(Date.now() + 3_600_000).toISOString()}`);
    expect(future.body.entries).toEqual([]);
    for (const bad of ['since=yesterday-ish', 'limit=0', 'limit=abc', 'user=', 'until=7x', 'colour=red']) {
      const res = await core.api<{ message: string }>('GET', `/api/audit?${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.message.length, bad).toBeGreaterThan(10);
    }
  });

  it('is for the admin only', async () => {
    const token = (await core.api<{ token: string }>('POST', '/api/users', { user_id: 'alice' })).body.token;
    const res = await callApi(core.httpUrl, token, 'GET', '/api/audit');
    expect(res.status).toBe(403);
  });

  it('`homeclaw audit --user --since --json`', async () => {
    const table = await homeclaw(['audit', '--since', '1h'], env);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/TIME\s+USER\s+CHANNEL\s+PLUGIN\s+CAPABILITY\s+OUTCOME\s+MS/);
    expect(table.stdout).toMatch(/alice\s+home\s+lock\s+unlock\s+ok/);
    const json = await homeclaw(['audit', '--user', 'kid', '--json'], env);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout) as AuditEntry[];
    expect(parsed.map((e) => e.outcome)).toEqual(['forbidden']);
    const old = await homeclaw(['audit', '--since', '2000-01-01', '--until', '2000-01-02'], env);
    expect(old.stdout).toMatch(/no audit entries/);
    const bad = await homeclaw(['audit', '--since', 'last tuesday'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/since/);
  });

  it('keeps at most access.audit.max_entries entries (the newest)', async () => {
    for (let i = 0; i < 60; i++) await core.api('POST', '/v1/plugins/lock/tools/status/run', {});
    await core.ctx.audit.flush();
    const count = (core.ctx.db.prepare('SELECT COUNT(*) AS n FROM audit_log').get() as { n: number }).n;
    expect(count).toBeLessThanOrEqual(40);
    expect(count).toBeGreaterThanOrEqual(30);
    const newest = await core.api<{ entries: AuditEntry[] }>('GET', '/api/audit?limit=1');
    expect(newest.body.entries[0]).toMatchObject({ capability_id: 'status', outcome: 'ok' });
  });
});
