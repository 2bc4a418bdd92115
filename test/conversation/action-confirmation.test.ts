// A capability that requires confirmation in the engine: one question shows the action and every value
// (uncertain profile values included), "yes" runs exactly what was shown with confirmed: true, a
// correction asks again, and the user's policy hides what they may not reach.
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AccessPolicy } from '../../src/access/policy.js';
import { confirmationQuestion } from '../../src/conversation/action-confirmation.js';
import { createConversationEngine, type ConversationEngine } from '../../src/conversation/engine.js';
import { SqlitePendingCallStore } from '../../src/conversation/pending-store.js';
import { SqliteProfileStore } from '../../src/conversation/profile-store.js';
import { PatternReplyInterpreter } from '../../src/conversation/reply-interpreter.js';
import { DefaultParameterResolver } from '../../src/conversation/resolver.js';
import { silentLogger } from '../../src/log.js';
import type { PluginDescriptor } from '../../src/protocol/types.js';
import { buyDescriptor, FakeRegistry, FakeRetrieval, recordOf, RecordingDispatcher, timeDescriptor } from '../fixtures/conversation/fakes.js';

let db: Database.Database;
let dispatcher: RecordingDispatcher;
let engine: ConversationEngine;
let profiles: SqliteProfileStore;

function confirmingBuy(): PluginDescriptor {
  const buy = buyDescriptor({ default_parameters: { payment_method: 'card' }, use_default_directly_for: ['payment_method'] });
  return { ...buy, capabilities: buy.capabilities.map((c) => ({ ...c, requires_confirmation: true })) };
}

beforeEach(() => {
  db = new Database(':memory:');
  dispatcher = new RecordingDispatcher();
  profiles = new SqliteProfileStore({ db });
  profiles.set('alice', { name: 'Alice', address: '12 Oak St', phone: '555-0100' });
  const registry = new FakeRegistry([confirmingBuy(), timeDescriptor]);
  engine = createConversationEngine({
    llm: null,
    retrieval: new FakeRetrieval(registry),
    dispatcher,
    registry,
    resolver: new DefaultParameterResolver(),
    pending: new SqlitePendingCallStore({ db }),
    interpreter: new PatternReplyInterpreter(),
    profiles,
    log: silentLogger(),
    access: new AccessPolicy({ users: { kid: { deny: ['buy'] } }, require_confirmation: [] }),
    settings: { top_k: 3, max_rounds: 3, pending_ttl_sec: 600, no_llm_threshold: 0.5, max_text_bytes: 16_384, default_timezone: 'UTC' },
  });
});
afterEach(() => db.close());

const say = (text: string, user = 'alice') => engine.handleMessage({ channel: 'home', user_id: user, text });

describe('capabilities that require confirmation', () => {
  it('one question shows the action and every value, profile ones marked; "yes" runs exactly that', async () => {
    const question = await say('/buy place_order item=milk');
    expect(question.kind).toBe('question');
    expect(question.text).toBe(
      'Please confirm: Place order (Buy Plugin) with item "milk", address "12 Oak St" (from your profile), phone "555-0100" (from your profile), ' +
        'contact_name "Alice" (from your profile) and payment_method "card" (from the plugin settings). Reply "yes" to go ahead, give corrected values (e.g. address=...), or "cancel".',
    );
    expect(dispatcher.calls).toEqual([]);
    profiles.set('alice', { address: 'changed meanwhile' });
    const done = await say('yes');
    expect(done.kind).toBe('answer');
    expect(dispatcher.calls).toHaveLength(1);
    expect(dispatcher.calls[0]).toMatchObject({ plugin_id: 'buy', confirmed: true, parameters: { item: 'milk', address: '12 Oak St', phone: '555-0100' } });
  });

  it('a correction is asked again with the new value before anything runs', async () => {
    await say('/buy place_order item=milk');
    const again = await say('address="5 Elm St"');
    expect(again.kind).toBe('question');
    expect(again.text).toContain('address "5 Elm St"');
    expect(dispatcher.calls).toEqual([]);
    await say('yes');
    expect(dispatcher.calls[0]?.parameters).toMatchObject({ address: '5 Elm St' });
  });

  it('cancel ends it; another command drops it, so a later "yes" confirms nothing', async () => {
    await say('/buy place_order item=milk');
    expect((await say('cancel')).text).toBe('Cancelled.');
    await say('/buy place_order item=bread');
    await say('/time now');
    const yes = await say('yes');
    expect(yes.plugin_id).toBeUndefined();
    expect(dispatcher.calls.map((c) => c.plugin_id)).toEqual(['time']);
  });

  it("the user's policy hides what they may not reach from /plugins", async () => {
    expect((await say('/plugins', 'kid')).text).not.toContain('buy');
    expect((await say('/plugins', 'alice')).text).toContain('buy');
  });
});

describe('confirmationQuestion', () => {
  it('leaves out the request context and says when there are no values', () => {
    const record = recordOf({ ...timeDescriptor, capabilities: [{ ...timeDescriptor.capabilities[0]!, name: 'Reboot', parameters: [] }] });
    expect(confirmationQuestion(record, record.descriptor.capabilities[0]!, [{ name: 'timezone', value: 'UTC', source: 'system' }])).toBe(
      'Please confirm: Reboot (Time). Reply "yes" to go ahead, or "cancel".',
    );
  });
});
