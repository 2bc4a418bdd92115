// Which login an MQTT client id belongs to: the store (SQLite, bounded per login) and the rule.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientIdStore, mayUseClientId, takesBackOwnSdkId, type ClientIdQuestion } from '../../src/bus/client-id-claims.js';
import { pluginIdOfSdkClientId, sdkClientId } from '../../src/protocol/ids.js';

describe('ClientIdStore', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the first login of an id, across a reopened database', () => {
    const dir = mkdtempSync(join(tmpdir(), 'client-ids-'));
    dirs.push(dir);
    const file = join(dir, 'homeclaw.db');
    const first = new Database(file);
    const store = new ClientIdStore(first);
    expect(store.holderOf('lamp-1')).toBeUndefined();
    store.claim('lamp-1', 'lamp');
    store.claim('lamp-1', 'lamp');
    expect(store.holderOf('lamp-1')).toBe('lamp');
    first.close();
    const reopened = new Database(file);
    expect(new ClientIdStore(reopened).holderOf('lamp-1')).toBe('lamp');
    reopened.close();
  });

  it('keeps at most the newest ids of a login, and forgets all of them on release', () => {
    let clock = 0;
    const store = new ClientIdStore(new Database(':memory:'), 3, () => ++clock);
    for (const id of ['a', 'b', 'c', 'd']) store.claim(id, 'spammer');
    store.claim('x', 'other');
    expect(['a', 'b', 'c', 'd'].map((id) => store.holderOf(id))).toEqual([undefined, 'spammer', 'spammer', 'spammer']);
    // Using an id again makes it the newest: 'b' survives the next new one, 'c' does not.
    store.claim('b', 'spammer');
    store.claim('e', 'spammer');
    expect(['b', 'c', 'd', 'e'].map((id) => store.holderOf(id))).toEqual(['spammer', undefined, 'spammer', 'spammer']);
    store.releaseLogin('spammer');
    expect(['b', 'd', 'e'].map((id) => store.holderOf(id))).toEqual([undefined, undefined, undefined]);
    expect(store.holderOf('x')).toBe('other');
  });
});

describe('mayUseClientId', () => {
  const owners: Record<string, string[]> = { 'lamp-new': ['lamp'], lamp: [] };
  const ask = (question: Partial<ClientIdQuestion>) =>
    mayUseClientId({
      clientId: 'device-7',
      login: 'weather',
      holder: 'lamp',
      holderExists: true,
      ownsPlugin: (login, pluginId) => owners[login]?.includes(pluginId) ?? false,
      ...question,
    });

  it('lets the holder, and anyone for a free id, connect', () => {
    expect(ask({ holder: undefined })).toEqual({ allowed: true });
    expect(ask({ login: 'lamp' })).toEqual({ allowed: true });
    expect(ask({ login: undefined, holder: undefined })).toEqual({ allowed: true });
  });

  it('refuses another login and anonymous clients an id held by a login, naming the holder', () => {
    expect(ask({})).toEqual({ allowed: false, reason: 'client id "device-7" belongs to login "lamp"' });
    expect(ask({ login: undefined }).allowed).toBe(false);
  });

  it('frees the id of a removed credential', () => {
    expect(ask({ holderExists: false })).toEqual({ allowed: true });
  });

  it('hands the SDK id of a plugin to the login that owns the plugin now, and only that one', () => {
    const id = sdkClientId('lamp');
    expect(ask({ clientId: id, login: 'lamp-new' })).toEqual({ allowed: true });
    expect(ask({ clientId: id, login: 'weather' }).allowed).toBe(false);
    // Not an SDK id: ownership of a plugin does not matter.
    expect(ask({ clientId: 'lamp', login: 'lamp-new' }).allowed).toBe(false);
    // Both own it (the holder still does): the holder keeps it.
    expect(ask({ clientId: id, login: 'lamp-new', ownsPlugin: () => true }).allowed).toBe(false);
  });

  it('lets a plugin owner take its SDK id from a connected anonymous client, never the other way round', () => {
    const owns = (login: string, pluginId: string) => owners[login]?.includes(pluginId) ?? false;
    expect(takesBackOwnSdkId(sdkClientId('lamp'), 'lamp-new', undefined, owns)).toBe(true);
    expect(takesBackOwnSdkId(sdkClientId('lamp'), undefined, 'lamp', owns)).toBe(false);
    expect(takesBackOwnSdkId(sdkClientId('lamp'), 'weather', undefined, owns)).toBe(false);
  });

  it('reads the plugin id of an SDK client id only when it is a valid plugin id', () => {
    expect(pluginIdOfSdkClientId('homeclaw-plugin-lamp')).toBe('lamp');
    expect(pluginIdOfSdkClientId('homeclaw-plugin-')).toBeUndefined();
    expect(pluginIdOfSdkClientId('homeclaw-plugin-Lamp/#')).toBeUndefined();
    expect(pluginIdOfSdkClientId('lamp')).toBeUndefined();
  });
});
