// Profile corrections with the scripted model on the real Core ("the
// user can correct ... on the next profile_update the profile is updated"): the model's profile_update
// becomes a question showing old → new, and nothing is written until the user says yes; cancel, a
// correction and moving on all work; the new address is what the next order uses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { connectTestClient, type TestClient } from '../helpers/mqtt-client.js';
import { startScriptedLlm, type ChatRequestBody, type ScriptedLlm, type ScriptedResponse } from '../helpers/scripted-llm.js';
import { channelUser, ensureBuilt, makePluginsDir, type ChannelUser } from './helpers.js';

function lastUser(request: ChatRequestBody): string {
  const users = request.messages.filter((m) => m.role === 'user');
  return String(users[users.length - 1]?.content ?? '');
}

function model(request: ChatRequestBody): ScriptedResponse {
  const last = request.messages[request.messages.length - 1]!;
  if (last.role === 'tool') return { text: `model saw: ${String(last.content)}` };
  const text = lastUser(request);
  const address = /my new address is (.+)$/i.exec(text);
  if (address) return { tool_calls: [{ name: 'profile_update', arguments: { updates: { address: address[1] } } }] };
  const phone = /my phone is (.+)$/i.exec(text);
  if (phone) return { tool_calls: [{ name: 'profile_update', arguments: { updates: { phone: phone[1] } } }] };
  if (/garbled/.test(text)) return { tool_calls: [{ name: 'profile_update', arguments: { updates: 'address: somewhere' } }] };
  if (/^buy/i.test(text)) return { tool_calls: [{ name: 'route_to_plugin', arguments: { plugin_id: 'buy', parameters: { item: 'milk' } } }] };
  return { text: `(model) ${text}` };
}

let core: TestCore;
let llm: ScriptedLlm;
let client: TestClient;
let alice: ChannelUser;

async function profile(): Promise<Record<string, unknown>> {
  const res = await core.api<{ profile: Record<string, unknown> }>('GET', '/api/profiles/alice');
  return res.body.profile;
}

beforeAll(async () => {
  await ensureBuilt();
  llm = await startScriptedLlm({ respond: model });
  core = await startTestCore({ pluginsDir: makePluginsDir({ shipped: [{ id: 'buy' }] }), overrides: { llm: { base_url: llm.url, model: 'scripted' } } });
  expect((await core.api('POST', '/api/profiles/alice', { set: { name: 'Alice', address: '12 Oak St', phone: '555-0100' } })).status).toBe(200);
  client = await connectTestClient(core.mqttUrl);
  await client.subscribe(topics.channelOut('chat'));
  alice = channelUser(client, 'chat', 'alice', 'profile-test');
}, 120_000);

afterAll(async () => {
  await client?.end();
  await core?.cleanup();
  await llm?.close();
});

describe('profile_update on the LLM path', () => {
  it('offers the tool to the model', async () => {
    await alice.say('hello');
    const tools = llm.requests.at(-1)?.tools?.map((t) => t.function.name);
    expect(tools).toEqual(['route_to_plugin', 'find_plugins', 'profile_update']);
  });

  it('"remember my new address is ..." asks with old → new and writes only after yes, without another model round', async () => {
    const question = await alice.say('remember my new address is 456 New Rd');
    expect(question.kind).toBe('question');
    expect(question.text).toBe(
      'Update your profile: address "12 Oak St" → "456 New Rd"? Reply "yes" to save, give a corrected value (e.g. address=...), or "cancel".',
    );
    expect((await profile())['address']).toBe('12 Oak St');
    const before = llm.requests.length;
    const saved = await alice.say('yes');
    expect(saved).toMatchObject({ kind: 'answer', text: 'Saved: address is now "456 New Rd".' });
    expect(llm.requests.length).toBe(before);
    expect((await profile())['address']).toBe('456 New Rd');
  });

  it('cancel leaves the profile as it was', async () => {
    const question = await alice.say('remember my phone is 555-9999');
    expect(question.text).toContain('phone "555-0100" → "555-9999"');
    expect(await alice.say('cancel')).toMatchObject({ kind: 'answer', text: 'Cancelled: your profile is unchanged.' });
    expect((await profile())['phone']).toBe('555-0100');
  });

  it('a correction is asked again before saving', async () => {
    await alice.say('remember my new address is 9 Elm St');
    const again = await alice.say('address=10 Elm St');
    expect(again).toMatchObject({ kind: 'question' });
    expect(again.text).toContain('address "456 New Rd" → "10 Elm St"');
    expect((await profile())['address']).toBe('456 New Rd');
    expect((await alice.say('yes')).text).toBe('Saved: address is now "10 Elm St".');
    expect((await profile())['address']).toBe('10 Elm St');
  });

  it('moving on drops the proposal: a later "yes" saves nothing', async () => {
    await alice.say('remember my new address is 1 Nowhere Lane');
    expect((await alice.say('what is the weather like')).text).toBe('(model) what is the weather like');
    const yes = await alice.say('yes');
    expect(yes.text).toBe('(model) yes');
    expect((await profile())['address']).toBe('10 Elm St');
  });

  it('bad arguments go back to the model and store nothing', async () => {
    const reply = await alice.say('garbled update please');
    expect(reply.text).toContain('model saw: Error: invalid profile_update call: "updates" must be an object');
    expect((await alice.say('yes')).text).toBe('(model) yes');
  });

  it('the next order uses the corrected address', async () => {
    const reply = await alice.say('buy me some milk');
    expect(reply.kind).toBe('question');
    expect(reply.text).toContain('"10 Elm St"');
  });
});
