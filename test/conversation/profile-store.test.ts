import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseProfileAssignments, parseProfilesYaml, seedProfiles, SqliteProfileStore } from '../../src/conversation/profile-store.js';

describe('SqliteProfileStore', () => {
  let dir: string;
  let db: Database.Database;
  let store: SqliteProfileStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'homeclaw-profiles-'));
    db = new Database(join(dir, 'core.db'));
    store = new SqliteProfileStore({ db });
  });

  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('returns an empty profile for an unknown user', () => {
    expect(store.get('nobody')).toEqual({});
  });

  it('merges keys on set and keeps JSON types', () => {
    store.set('alice', { name: 'Alice', phone: '0555' });
    store.set('alice', { address: '1 Main St', tags: ['a'], vip: true, age: 30 });
    store.set('alice', { phone: '0666' });
    expect(store.get('alice')).toEqual({ name: 'Alice', phone: '0666', address: '1 Main St', tags: ['a'], vip: true, age: 30 });
    expect(store.get('bob')).toEqual({});
    expect(store.users()).toEqual(['alice']);
  });

  it('unsets keys and returns what is left', () => {
    store.set('alice', { name: 'Alice', phone: '0555', address: 'x' });
    expect(store.unset('alice', ['phone', 'missing'])).toEqual({ name: 'Alice', address: 'x' });
    expect(store.get('alice')).toEqual({ name: 'Alice', address: 'x' });
  });

  it('persists across reopen', () => {
    store.set('alice', { name: 'Alice' });
    db.close();
    db = new Database(join(dir, 'core.db'));
    expect(new SqliteProfileStore({ db }).get('alice')).toEqual({ name: 'Alice' });
  });

  it('seeds from YAML without overwriting values already set', async () => {
    const file = join(dir, 'profiles.yaml');
    writeFileSync(
      file,
      ['users:', '  alice:', '    name: Alice', '    phone: "0555"', '  bob:', '    name: Bob', '    address: 2 Oak Rd', '  empty:'].join('\n'),
    );
    store.set('alice', { phone: '0999' });
    expect(await seedProfiles(store, file)).toEqual({ users: 2, keys_set: 3 });
    expect(store.get('alice')).toEqual({ name: 'Alice', phone: '0999' });
    expect(store.get('bob')).toEqual({ name: 'Bob', address: '2 Oak Rd' });
    expect(await seedProfiles(store, file, { overwrite: true })).toEqual({ users: 2, keys_set: 4 });
    expect(store.get('alice').phone).toBe('0555');
  });

  it('accepts the shipped sample file (all commented out)', async () => {
    const sample = fileURLToPath(new URL('../../config/profiles.yaml', import.meta.url));
    expect(await seedProfiles(store, sample)).toEqual({ users: 0, keys_set: 0 });
  });

  it('rejects a missing file', async () => {
    await expect(seedProfiles(store, join(dir, 'nope.yaml'))).rejects.toThrow(/ENOENT/);
  });
});

describe('parseProfilesYaml', () => {
  it.each([
    ['not YAML', 'users: [', /not valid YAML/],
    ['a list at the top', '- a', /expected a mapping/],
    ['users as a list', 'users: [a, b]', /"users" must be a mapping/],
    ['a profile as text', 'users:\n  alice: hello', /users\.alice must be a mapping/],
  ])('refuses %s with the offending path', (_label, text, message) => {
    expect(() => parseProfilesYaml(text, 'p.yaml')).toThrow(message);
  });

  it('reads an empty document as no profiles', () => {
    expect(parseProfilesYaml('# nothing\n').size).toBe(0);
  });
});

describe('parseProfileAssignments', () => {
  it('reads key=value arguments as text', () => {
    expect(parseProfileAssignments(['phone=0555', 'address=1 Main St, City', 'note=a=b'])).toEqual({
      ok: true,
      values: { phone: '0555', address: '1 Main St, City', note: 'a=b' },
    });
  });

  it('refuses arguments without a key', () => {
    expect(parseProfileAssignments(['=x'])).toEqual({ ok: false, error: 'expected key=value, got "=x"' });
    expect(parseProfileAssignments(['phone'])).toEqual({ ok: false, error: 'expected key=value, got "phone"' });
    expect(parseProfileAssignments([])).toEqual({ ok: false, error: 'give at least one key=value' });
  });
});
