import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CredentialStore } from '../../src/bus/credentials.js';

describe('CredentialStore', () => {
  let db: Database.Database;
  let store: CredentialStore;

  beforeEach(() => {
    db = new Database(':memory:');
    store = new CredentialStore(db);
  });
  afterEach(() => db.close());

  it('returns a strong password once and verifies it', async () => {
    const created = await store.add('weather', 'plugin');
    expect(created.name).toBe('weather');
    expect(created.password.length).toBeGreaterThanOrEqual(32);
    const info = await store.verify('weather', created.password);
    expect(info).toMatchObject({ name: 'weather', role: 'plugin', plugin_ids: ['weather'], channels: ['weather'] });
  });

  it('refuses a wrong password and an unknown name', async () => {
    const created = await store.add('weather', 'plugin');
    expect(await store.verify('weather', `${created.password}x`)).toBeNull();
    expect(await store.verify('weather', '')).toBeNull();
    expect(await store.verify('nobody', created.password)).toBeNull();
  });

  it('stores a salted hash, never the password', async () => {
    const a = await store.add('alpha', 'admin');
    const b = await store.add('beta', 'channel');
    const rows = db.prepare('SELECT * FROM mqtt_credentials').all() as Record<string, unknown>[];
    expect(rows).toHaveLength(2);
    const dump = JSON.stringify(rows.map((row) => Object.values(row).map((v) => (Buffer.isBuffer(v) ? v.toString('latin1') : v))));
    expect(dump).not.toContain(a.password);
    expect(dump).not.toContain(b.password);
    const [first, second] = rows as { salt: Buffer; hash: Buffer }[];
    expect(first!.hash.length).toBe(32);
    expect(first!.salt.equals(second!.salt)).toBe(false);
  });

  it('keeps explicit plugin ids and channels', async () => {
    await store.add('acme', 'plugin', { plugin_ids: ['acme-lights', 'acme-locks'] });
    await store.add('telegram', 'channel', { channels: ['telegram', 'telegram-family'] });
    expect(store.get('acme')?.plugin_ids).toEqual(['acme-lights', 'acme-locks']);
    expect(store.get('telegram')?.channels).toEqual(['telegram', 'telegram-family']);
  });

  it.each([
    ['empty name', '', 'plugin', {}],
    ['slash in name', 'a/b', 'plugin', {}],
    ['plus in name', '+', 'plugin', {}],
    ['hash in name', '#', 'plugin', {}],
    ['200 characters', 'a'.repeat(200), 'plugin', {}],
    ['uppercase', 'Weather', 'plugin', {}],
    ['unknown role', 'ok-name', 'root', {}],
    ['bad plugin id', 'ok-name', 'plugin', { plugin_ids: ['x/y'] }],
    ['bad channel', 'ok-name', 'channel', { channels: ['#'] }],
  ])('rejects %s with a clear error and stores nothing', async (_label, name, role, options) => {
    await expect(store.add(name, role as 'plugin', options)).rejects.toThrow(/must|role|at most/);
    expect(store.list()).toEqual([]);
  });

  it('refuses a duplicate name', async () => {
    await store.add('weather', 'plugin');
    await expect(store.add('weather', 'admin')).rejects.toThrow(/already exists/);
    expect(store.get('weather')?.role).toBe('plugin');
  });

  it('lists without secrets and removes', async () => {
    const created = await store.add('weather', 'plugin');
    await store.add('admin1', 'admin');
    const listed = store.list();
    expect(listed.map((c) => c.name)).toEqual(['admin1', 'weather']);
    for (const entry of listed) expect(Object.keys(entry).sort()).toEqual(['channels', 'created_at', 'name', 'plugin_ids', 'role']);
    expect(store.remove('weather')).toBe(true);
    expect(store.remove('weather')).toBe(false);
    expect(await store.verify('weather', created.password)).toBeNull();
  });

  it('keeps credentials across a reopen of the database', async () => {
    const created = await store.add('weather', 'plugin');
    const again = new CredentialStore(db);
    expect((await again.verify('weather', created.password))?.role).toBe('plugin');
  });
});
