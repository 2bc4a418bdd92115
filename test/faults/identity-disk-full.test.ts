// Attack (or accident): the data volume fills up. Every write then failed with a bare "500 internal
// error", and a user's message got "something went wrong". Defence: SQLITE_FULL / ENOSPC become a clear
// "disk full" error naming the operation (HTTP 507, a channel error reply, a registration nack), nothing
// half-written, and everything works again once space is freed.
//
// The data dir is a real 8 MiB tmpfs filled to the last byte (needs root to mount); where mounting is
// not possible (or HOMECLAW_TEST_NO_TMPFS=1), SQLite's max_page_count gives the very same SQLITE_FULL
// from the database.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import type { RegistrationAck } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { connectTestClient, type TestClient } from '../helpers/mqtt-client.js';
import { channelUser, ensureBuilt, makePluginsDir } from '../e2e/helpers.js';

let mountPoint: string;
let mounted = false;
let core: TestCore;
let client: TestClient;
const filler = (): string => join(core.dataDir, 'filler.bin');

function tryMountTmpfs(dir: string): boolean {
  if (process.getuid?.() !== 0 || process.env.HOMECLAW_TEST_NO_TMPFS === '1') return false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m,mode=0700', 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Writes until the volume refuses (ENOSPC); with max_page_count the database alone is full. */
function fillTheDisk(): void {
  if (mounted) {
    const chunk = Buffer.alloc(64 * 1024, 1);
    try {
      for (let i = 0; i < 1000; i++) writeFileSync(filler(), chunk, { flag: 'a' });
    } catch (err) {
      expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
    }
    // The last partial chunk: byte by byte until nothing fits.
    try {
      for (let i = 0; i < 65536; i++) writeFileSync(filler(), 'x', { flag: 'a' });
    } catch (err) {
      expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
    }
  } else {
    // No new pages, then small rows until the free space inside the existing pages is gone too.
    const db = core.ctx.db;
    db.exec('CREATE TABLE IF NOT EXISTS disk_filler (x BLOB)');
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
    const insert = db.prepare('INSERT INTO disk_filler (x) VALUES (?)');
    for (const size of [4096, 512, 64, 8, 1]) {
      try {
        for (let i = 0; i < 100_000; i++) insert.run(Buffer.alloc(size));
      } catch (err) {
        expect((err as { code?: string }).code).toBe('SQLITE_FULL');
      }
    }
  }
}

function freeTheDisk(): void {
  if (mounted) unlinkSync(filler());
  else {
    core.ctx.db.pragma('max_page_count = 1073741823');
    core.ctx.db.exec('DROP TABLE disk_filler');
  }
}

beforeAll(async () => {
  await ensureBuilt();
  mountPoint = mkdtempSync(join(tmpdir(), 'homeclaw-full-'));
  mounted = tryMountTmpfs(mountPoint);
  core = await startTestCore({
    dataDir: mountPoint,
    pluginsDir: makePluginsDir({ shipped: [{ id: 'buy' }] }),
    overrides: { access: { audit: { flush_interval_ms: 50 } } },
  });
  await core.api('POST', '/api/profiles/alice', { set: { name: 'Alice', address: '12 Oak St', phone: '555-0100' } });
  client = await connectTestClient(core.mqttUrl);
  await client.subscribe(topics.channelOut('home'));
  // Checkpoint so the WAL does not hide free pages: the fill then hits the database itself.
  core.ctx.db.pragma('wal_checkpoint(TRUNCATE)');
  fillTheDisk();
}, 120_000);

afterAll(async () => {
  await client?.end(true);
  await core?.cleanup({ keepData: true });
  if (mounted) execFileSync('umount', [mountPoint]);
  rmSync(mountPoint, { recursive: true, force: true });
});

describe('a full disk', () => {
  it('is really full', () => {
    if (mounted) expect(statfsSync(core.dataDir).bavail).toBe(0);
    else expect(() => core.ctx.db.prepare('CREATE TABLE filler_probe (x BLOB)').run()).toThrow(/full/);
  });

  it('HTTP writes answer 507 "disk full" naming the operation, and change nothing', async () => {
    const profile = await core.api<{ message: string }>('PUT', '/api/profiles/bob', { profile: { name: 'Bob', bio: 'x'.repeat(60_000) } });
    expect(profile.status).toBe(507);
    expect(profile.body.message).toMatch(/^disk full: .*profile of bob/);
    expect(core.ctx.profiles.get('bob')).toEqual({});

    const big = {
      id: 'bigplugin',
      name: 'Big',
      description: 'd'.repeat(300_000),
      type: 'subprocess',
      config: { command: 'true' },
      capabilities: [{ id: 'run', name: 'Run', description: 'r', parameters: [] }],
    };
    const register = await core.api<{ message: string }>('POST', '/api/plugins/register', big);
    expect(register.status).toBe(507);
    expect(register.body.message).toMatch(/^disk full: .*registering plugin bigplugin/);
    expect(core.ctx.registry.get('bigplugin')).toBeUndefined();

    // max_page_count still fits a tiny row into a page with room; only a really full volume refuses it.
    if (mounted) {
      const user = await core.api<{ message: string }>('POST', '/api/users', { user_id: 'carol' });
      expect(user.status).toBe(507);
      expect(user.body.message).toMatch(/^disk full: .*user carol/);
      expect(core.ctx.users.list()).toEqual([]);
    }
  });

  it('a channel message that needs to save a question gets a clear error reply', async () => {
    const reply = await channelUser(client, 'home', 'alice').say(`/buy place_order item="${'milk '.repeat(2000).trim()}"`);
    expect(reply.kind).toBe('error');
    expect(reply.text).toMatch(/disk full: saving the question about buy\.place_order failed/);
    expect(core.ctx.pendingCalls.get({ channel: 'home', user_id: 'alice', session_id: 'default' })).toBeUndefined();
  });

  it('an MQTT registration gets a nack saying the disk is full', async () => {
    const plugin = await connectTestClient(core.mqttUrl);
    await plugin.subscribe(topics.registered('fatplugin'));
    await plugin.publish(topics.register(), {
      id: 'fatplugin',
      name: 'Fat',
      description: 'f'.repeat(200_000),
      capabilities: [{ id: 'run', name: 'Run', description: 'r', parameters: [] }],
      epoch: 1,
    });
    const ack = (await plugin.waitFor(topics.registered('fatplugin'))).json<RegistrationAck>();
    expect(ack.ok).toBe(false);
    expect(JSON.stringify(ack.errors)).toMatch(/disk full/);
    await plugin.end(true);
  });

  it('works again once space is freed', async () => {
    freeTheDisk();
    const profile = await core.api('PUT', '/api/profiles/bob', { profile: { name: 'Bob' } });
    expect(profile.status).toBe(200);
    expect(core.ctx.profiles.get('bob')).toEqual({ name: 'Bob' });
    expect(core.ctx.profiles.get('alice')).toEqual({ name: 'Alice', address: '12 Oak St', phone: '555-0100' });
    const reply = await channelUser(client, 'home', 'alice').say('/buy place_order item=milk');
    expect(reply.kind).toBe('question');
  });
});
