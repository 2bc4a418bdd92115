// The parameter dialogue's flows through every part of this room at once: resolver → pending store → reply
// interpreter → merge → resolver → the real buy plugin writing to SQLite. The engine (LLM loop, channels)
// is not involved; this is the deterministic core it orchestrates.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listOrders, place_order } from '../../plugins/buy/index.js';
import { newPendingCall, SqlitePendingCallStore } from '../../src/conversation/pending-store.js';
import { mergeReply, PatternReplyInterpreter } from '../../src/conversation/reply-interpreter.js';
import { DefaultParameterResolver } from '../../src/conversation/resolver.js';
import type { Profile, SessionKey } from '../../src/conversation/resolver-api.js';
import { silentLogger } from '../../src/log.js';
import type { JsonObject, PluginConfig } from '../../src/protocol/types.js';
import { buyCapability, recordWith, system } from './buy-fixture.js';

const session: SessionKey = { channel: 'cli', user_id: 'alice', session_id: 'default' };

describe('parameter dialogue flows', () => {
  let dir: string;
  let db: Database.Database;
  let clock: number;
  let pendingStore: SqlitePendingCallStore;
  const resolver = new DefaultParameterResolver();
  const interpreter = new PatternReplyInterpreter();
  const capability = buyCapability();

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'homeclaw-dialogue-'));
    db = new Database(join(dir, 'core.db'));
    clock = 5_000;
    pendingStore = new SqlitePendingCallStore({ db, now: () => clock });
  });

  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** One turn: a pending call takes the reply if it can; otherwise the "LLM" supplies `explicit`. */
  async function turn(text: string, config: PluginConfig, profile: Profile, explicit: JsonObject = {}): Promise<string> {
    const record = recordWith(config, [capability]);
    let confirmed: string[] = [];
    const pending = pendingStore.get(session);
    if (pending) {
      const reply = interpreter.interpret(pending, capability, text);
      if (reply.kind === 'cancel') {
        pendingStore.clear(session);
        return 'Cancelled.';
      }
      if (reply.kind !== 'unrelated') ({ explicit, confirmed } = mergeReply(pending, reply));
    }
    const outcome = resolver.resolve({ record, capability, explicit, confirmed, profile, system });
    if (outcome.status === 'ask') {
      pendingStore.set(
        session,
        newPendingCall(
          {
            plugin_id: 'buy',
            capability_id: capability.id,
            explicit,
            confirmed,
            missing: [...outcome.missing.map((p) => p.name), ...outcome.invalid.map((i) => i.name)],
            uncertain: outcome.uncertain.map((v) => v.name),
            question: outcome.question,
            user_input: text,
          },
          clock,
          600,
        ),
      );
      return outcome.question;
    }
    pendingStore.clear(session);
    const result = await place_order(outcome.parameters, {
      data_dir: dir,
      log: silentLogger(),
      config,
      signal: new AbortController().signal,
      notify: async () => ({ ok: false, error: 'no notifications in this test' }),
      request: { request_id: `r${clock}`, plugin_id: 'buy', capability_id: capability.id, parameters: outcome.parameters, deadline: clock + 1000 },
    });
    clock += 1;
    return typeof result === 'string' ? result : (result.text ?? '');
  }

  it('preset config used directly places the order at once', async () => {
    const config = { default_parameters: { address: '123 Main St', contact_name: 'John', phone: '555-0000' }, use_defaults_directly: true };
    expect(await turn('Buy milk', config, {}, { item: 'milk' })).toMatch(/^Order placed for milk: delivery to 123 Main St/);
    expect(listOrders(dir)).toHaveLength(1);
  });

  it('profile plus one missing value, answered with a bare value and a confirmation', async () => {
    const profile = { name: 'John', address: '123 Main St' };
    const question = await turn('Buy milk', {}, profile, { item: 'milk' });
    expect(question).toContain('phone (Contact phone number)');
    expect(question).toContain('address as "123 Main St"');
    expect(listOrders(dir)).toHaveLength(0);
    expect(await turn('yes, 555-1234', {}, profile)).toMatch(/^Order placed for milk/);
    expect(listOrders(dir)[0]).toMatchObject({ item: 'milk', address: '123 Main St', phone: '555-1234', contact_name: 'John' });
  });

  it('profile values confirmed with "yes"', async () => {
    const profile = { name: 'John', address: '123 Main St', phone: '555-0000' };
    expect(await turn('Buy milk', {}, profile, { item: 'milk' })).toContain('I have your address as "123 Main St" and phone as "555-0000"');
    expect(await turn('yes', {}, profile)).toMatch(/^Order placed/);
    expect(listOrders(dir)[0]).toMatchObject({ address: '123 Main St', phone: '555-0000' });
  });

  it('profile values corrected', async () => {
    const profile = { name: 'John', address: '123 Main St', phone: '555-0000' };
    await turn('Buy milk', {}, profile, { item: 'milk' });
    expect(await turn('Actually use 456 Oak Ave, 555-1234', {}, profile)).toMatch(/^Order placed/);
    expect(listOrders(dir)[0]).toMatchObject({ address: '456 Oak Ave', phone: '555-1234', contact_name: 'John' });
  });

  it('everything missing, answered in one comma-separated reply', async () => {
    const question = await turn('Buy milk', {}, {}, { item: 'milk' });
    expect(question).toContain('address (Delivery address), phone (Contact phone number) and contact_name (Recipient name)');
    expect(await turn("123 Oak Ave, 555-1234, I'm John", {}, {})).toMatch(/^Order placed/);
    expect(listOrders(dir)[0]).toMatchObject({ address: '123 Oak Ave', phone: '555-1234', contact_name: 'John' });
  });

  it('cancel clears the pending call and nothing is ordered', async () => {
    await turn('Buy milk', {}, {}, { item: 'milk' });
    expect(await turn('never mind', {}, {})).toBe('Cancelled.');
    expect(pendingStore.get(session)).toBeUndefined();
    expect(listOrders(dir)).toHaveLength(0);
  });

  it('an expired pending call is not completed by a late answer', async () => {
    const profile = { name: 'John', address: '123 Main St', phone: '555-0000' };
    await turn('Buy milk', {}, profile, { item: 'milk' });
    clock += 601_000;
    // The "yes" now has nothing to confirm: with no LLM arguments the resolver asks again instead.
    expect(await turn('yes', {}, profile)).toContain('To place order I need item');
    expect(listOrders(dir)).toHaveLength(0);
  });
});
