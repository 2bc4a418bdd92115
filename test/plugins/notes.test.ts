import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinLoader, type BuiltinLoader } from '../../src/adapters/builtin-loader.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import { silentLogger } from '../../src/log.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { Registry } from '../../src/registry/registry.js';

let root: string;
let loader: BuiltinLoader;
let dispatcher: Dispatcher;

function registryOn(): Registry {
  return new Registry({ db: new Database(':memory:'), events: new TypedEventBus(silentLogger()), log: silentLogger() });
}

async function start(): Promise<void> {
  const registry = registryOn();
  loader = createBuiltinLoader({ dir: resolve('plugins'), data_dir: root, registry, log: silentLogger(), hot_reload: false, compiled_dir: join(root, 'none') });
  await loader.start();
  dispatcher = new Dispatcher({
    registry,
    adapters: [loader.adapter],
    config: { default_timeout_sec: 5, default_max_concurrency: 2, default_queue_limit: 10 },
    log: silentLogger(),
  });
}

async function stop(): Promise<void> {
  await dispatcher.stop();
  await loader.stop();
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'hc-notes-'));
  await start();
});
afterAll(async () => {
  await stop();
  rmSync(root, { recursive: true, force: true });
});

const call = (capability_id: string, parameters: Record<string, string | number> = {}) =>
  dispatcher.invoke({ plugin_id: 'notes', capability_id, parameters, context: { user_id: 'alice' } });

describe('notes plugin', () => {
  it('starts empty', async () => {
    expect(await call('list_notes')).toMatchObject({ success: true, text: 'You have no notes yet.', data: { notes: [] } });
  });

  it('saves notes into <data_dir>/plugins/notes/notes.db', async () => {
    const saved = await call('save_note', { text: 'The plumber comes on Tuesday', title: 'Plumber' });
    expect(saved).toMatchObject({ success: true, text: 'Saved note #1 "Plumber".' });
    await call('save_note', { text: 'Wifi password is 100% secret_pass' });
    await call('save_note', { text: 'Buy a present for Anna' });
    expect(existsSync(join(root, 'plugins', 'notes', 'notes.db'))).toBe(true);
  });

  it('lists the latest notes first, with a limit', async () => {
    const listed = await call('list_notes', { limit: 2 });
    const notes = (listed.data as { notes: { id: number; text: string }[] }).notes;
    expect(notes.map((n) => n.id)).toEqual([3, 2]);
    expect(listed.text).toContain('#3');
    expect(listed.text).not.toContain('#1 ');
  });

  it('searches title and text for all words, case-insensitively, treating % and _ literally', async () => {
    const plumber = await call('search_notes', { query: 'PLUMBER tuesday' });
    expect((plumber.data as { notes: { id: number }[] }).notes.map((n) => n.id)).toEqual([1]);
    const literal = await call('search_notes', { query: '100%' });
    expect((literal.data as { notes: { id: number }[] }).notes.map((n) => n.id)).toEqual([2]);
    const underscore = await call('search_notes', { query: 'secret_' });
    expect((underscore.data as { notes: unknown[] }).notes).toHaveLength(1);
    const wildcard = await call('search_notes', { query: '_' });
    expect((wildcard.data as { notes: unknown[] }).notes).toHaveLength(1);
    expect(await call('search_notes', { query: 'dentist' })).toMatchObject({ success: true, text: 'No note mentions "dentist".' });
  });

  it('refuses an empty note and a missing query', async () => {
    expect(await call('save_note', { text: '   ' })).toMatchObject({ success: false, ask_user: true, missing_parameters: ['text'] });
    expect((await call('search_notes', {})).error_code).toBe('invalid_params');
  });

  it("shows a user their own notes and the household's, never another user's", async () => {
    const as = (user: string | undefined, capability_id: string, parameters: Record<string, string> = {}) =>
      dispatcher.invoke({ plugin_id: 'notes', capability_id, parameters, ...(user ? { context: { user_id: user } } : {}) });
    await as('bob', 'save_note', { text: 'bank PIN is 9876' });
    await as(undefined, 'save_note', { text: 'the bins go out on Monday' });
    const texts = async (user: string | undefined, capability_id: string, parameters: Record<string, string> = {}) =>
      ((await as(user, capability_id, parameters)).data as { notes: { text: string }[] }).notes.map((n) => n.text);
    expect(await texts('alice', 'list_notes')).not.toContain('bank PIN is 9876');
    expect(await texts('alice', 'list_notes')).toContain('the bins go out on Monday');
    expect(await texts('alice', 'search_notes', { query: 'PIN' })).toEqual([]);
    expect(await texts('bob', 'list_notes')).toEqual(['the bins go out on Monday', 'bank PIN is 9876']);
    expect(await texts('bob', 'search_notes', { query: 'PIN' })).toEqual(['bank PIN is 9876']);
    // A call made for no user sees the household's notes only.
    expect(await texts(undefined, 'list_notes')).toEqual(['the bins go out on Monday']);
  });

  it('keeps the notes across a restart of the Core', async () => {
    await stop();
    await start();
    const listed = await call('list_notes');
    // alice's three and the household's one.
    expect((listed.data as { notes: unknown[] }).notes).toHaveLength(4);
  });
});
