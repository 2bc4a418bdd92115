// The conversation engine end to end over MQTT channel topics (real Aedes, real mqtt.js user), with the
// scripted model reached through the real openai client: the parameter dialogue's flows, cancel, TTL, post-processing,
// failures and concurrency.
import { afterEach, describe, expect, it } from 'vitest';
import type { PluginDescriptor } from '../../src/protocol/types.js';
import { systemPromptOf, type ChatRequestBody } from '../helpers/scripted-llm.js';
import { buyDescriptor, fillerDescriptors, notesDescriptor, ok, slowDescriptor, timeDescriptor, weatherDescriptor } from '../fixtures/conversation/fakes.js';
import { startHarness, type Harness } from '../fixtures/conversation/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const route = (plugin_id: string, parameters: Record<string, unknown> = {}, capability_id?: string) => ({
  tool_calls: [{ name: 'route_to_plugin', arguments: { plugin_id, ...(capability_id ? { capability_id } : {}), parameters } }],
});

function lastUserText(request: ChatRequestBody): string {
  const users = request.messages.filter((m) => m.role === 'user');
  const last = users[users.length - 1];
  return typeof last?.content === 'string' ? last.content : '';
}

/** The buy manifest with confirm_if_uncertain switched off for some parameters (the profile-plus-one-missing-value flow assumes so). */
function buyWithoutConfirmFor(names: string[]): PluginDescriptor {
  const d = buyDescriptor();
  return {
    ...d,
    capabilities: d.capabilities.map((c) => ({
      ...c,
      parameters: c.parameters.map((p) => (names.includes(p.name) ? { ...p, confirm_if_uncertain: false } : p)),
    })),
  };
}

async function start(plugins: PluginDescriptor[], settings = {}): Promise<Harness> {
  harness = await startHarness({ plugins, withLlm: true, settings });
  harness.dispatcher.on('buy', (o) => ok(`Order placed for ${String(o.parameters?.item)}.`));
  return harness;
}

describe('parameter dialogue flows with the scripted LLM', () => {
  it('preset config with use_defaults_directly invokes at once, and the model never sees the preset parameters', async () => {
    const h = await start([
      buyDescriptor({ default_parameters: { address: '123 Main St', contact_name: 'John', phone: '555-0000' }, use_defaults_directly: true }),
      timeDescriptor,
      weatherDescriptor,
      notesDescriptor,
      ...fillerDescriptors(12),
    ]);
    h.llm!.push(route('buy', { item: 'milk' }));
    const user = await h.user('alice');
    const reply = await user.say('Buy milk');
    expect(reply).toMatchObject({ kind: 'answer', text: 'Order placed for milk.', user_id: 'alice', plugin_id: 'buy', capability_id: 'place_order' });
    expect(h.dispatcher.calls).toHaveLength(1);
    expect(h.dispatcher.calls[0]!.parameters).toMatchObject({ item: 'milk', address: '123 Main St', contact_name: 'John', phone: '555-0000' });
    expect(h.dispatcher.calls[0]!.context).toMatchObject({ user_id: 'alice', channel_name: 'telegram', user_input: 'Buy milk' });
    // What the model was shown: only the top-k (3) plugins, and no parameter filled from trusted config.
    expect(h.llm!.requests).toHaveLength(1);
    const prompt = systemPromptOf(h.llm!.requests[0]!);
    expect(prompt).toContain('### buy');
    expect(prompt).toContain('item (string, required)');
    expect(prompt).not.toMatch(/address \(string|phone \(string|contact_name \(string/);
    expect(prompt).not.toContain('123 Main St');
    expect(prompt).not.toContain('lamp-0');
    expect((prompt.match(/^### /gm) ?? []).length).toBeLessThanOrEqual(3);
    expect(h.retrieval.queries[0]).toEqual({ query: 'Buy milk', k: 3 });
    expect(h.llm!.requests[0]!.tools!.map((t) => t.function.name).sort()).toEqual(['find_plugins', 'route_to_plugin']);
  });

  it('profile plus one missing value asks once, then invokes on the answer without another model round', async () => {
    const h = await start([buyWithoutConfirmFor(['address']), timeDescriptor]);
    h.profiles.set('bob', { name: 'John', address: '123 Main St' });
    h.llm!.push(route('buy', { item: 'milk' }));
    const user = await h.user('bob');
    const question = await user.say('Buy milk');
    expect(question.kind).toBe('question');
    expect(question.text).toMatch(/phone/i);
    expect(h.dispatcher.calls).toHaveLength(0);
    const answer = await user.say('555-1234');
    expect(answer).toMatchObject({ kind: 'answer', text: 'Order placed for milk.' });
    expect(h.llm!.requests).toHaveLength(1);
    expect(h.dispatcher.calls).toHaveLength(1);
    expect(h.dispatcher.calls[0]!.parameters).toMatchObject({ item: 'milk', address: '123 Main St', phone: '555-1234', contact_name: 'John' });
    // The prompt does show profile-backed parameters (they are not trusted config) but never their values.
    expect(systemPromptOf(h.llm!.requests[0]!)).not.toContain('123 Main St');
  });

  it('profile values needing confirmation are shown, and "yes" places the order with them', async () => {
    const h = await start([buyDescriptor(), timeDescriptor]);
    h.profiles.set('carol', { name: 'John', address: '123 Main St', phone: '555-0000' });
    h.llm!.push(route('buy', { item: 'milk' }));
    const user = await h.user('carol');
    const question = await user.say('Buy milk');
    expect(question.kind).toBe('question');
    expect(question.text).toContain('123 Main St');
    expect(question.text).toContain('555-0000');
    expect(h.dispatcher.calls).toHaveLength(0);
    const answer = await user.say('yes');
    expect(answer.kind).toBe('answer');
    expect(h.dispatcher.calls[0]!.parameters).toMatchObject({ item: 'milk', address: '123 Main St', phone: '555-0000', contact_name: 'John' });
    expect(h.llm!.requests).toHaveLength(1);
  });

  it('a correction replaces the profile values', async () => {
    const h = await start([buyDescriptor(), timeDescriptor]);
    h.profiles.set('dan', { name: 'John', address: '123 Main St', phone: '555-0000' });
    h.llm!.push(route('buy', { item: 'milk' }));
    const user = await h.user('dan');
    expect((await user.say('Buy milk')).kind).toBe('question');
    const answer = await user.say('address: 456 Oak Ave, phone: 555-1234');
    expect(answer.kind).toBe('answer');
    expect(h.dispatcher.calls).toHaveLength(1);
    expect(h.dispatcher.calls[0]!.parameters).toMatchObject({ item: 'milk', address: '456 Oak Ave', phone: '555-1234', contact_name: 'John' });
  });

  it('everything missing → one question listing all, then one answer with all values', async () => {
    const h = await start([buyDescriptor(), timeDescriptor]);
    h.llm!.push(route('buy', { item: 'milk' }));
    const user = await h.user('erin');
    const question = await user.say('Buy milk');
    expect(question.kind).toBe('question');
    for (const name of ['address', 'phone', 'contact_name']) expect(question.text).toContain(name);
    const answer = await user.say('123 Oak Ave, 555-1234, John');
    expect(answer.kind).toBe('answer');
    expect(h.dispatcher.calls[0]!.parameters).toMatchObject({ item: 'milk', address: '123 Oak Ave', phone: '555-1234', contact_name: 'John' });
  });
});

describe('pending calls', () => {
  it('"never mind" cancels: nothing is invoked, and a later "yes" goes to the model', async () => {
    const h = await start([buyDescriptor(), timeDescriptor]);
    h.profiles.set('fay', { name: 'John', address: '123 Main St', phone: '555-0000' });
    h.llm!.push(route('buy', { item: 'milk' }), { text: 'Yes to what?' });
    const user = await h.user('fay');
    expect((await user.say('Buy milk')).kind).toBe('question');
    expect(await user.say('never mind')).toMatchObject({ kind: 'answer', text: 'Cancelled.' });
    expect(await user.say('yes')).toMatchObject({ kind: 'answer', text: 'Yes to what?' });
    expect(h.dispatcher.calls).toHaveLength(0);
  });

  it('expires after its TTL: "yes" then takes the normal path and orders nothing', async () => {
    const h = await start([buyDescriptor(), timeDescriptor], { pending_ttl_sec: 60 });
    h.profiles.set('gus', { name: 'John', address: '123 Main St', phone: '555-0000' });
    h.llm!.push(route('buy', { item: 'milk' }), { text: 'Could you say what you would like?' });
    const user = await h.user('gus');
    expect((await user.say('Buy milk')).kind).toBe('question');
    h.clock.ms += 61_000;
    expect(await user.say('yes')).toMatchObject({ kind: 'answer', text: 'Could you say what you would like?' });
    expect(h.dispatcher.calls).toHaveLength(0);
  });

  it('an unrelated message drops the pending call: a later "yes" confirms nothing', async () => {
    const h = await start([buyDescriptor(), timeDescriptor]);
    h.profiles.set('hal', { name: 'John', address: '123 Main St', phone: '555-0000' });
    h.llm!.push(route('buy', { item: 'milk' }), { text: 'It is sunny.' }, { text: 'Yes to what?' });
    const user = await h.user('hal');
    expect((await user.say('Buy milk')).kind).toBe('question');
    expect(await user.say('how are you doing today?')).toMatchObject({ text: 'It is sunny.' });
    expect(await user.say('yes')).toMatchObject({ text: 'Yes to what?' });
    expect(h.dispatcher.calls).toHaveLength(0);
  });

  it('a plugin result with ask_user / missing_parameters becomes a question and the answer re-invokes', async () => {
    const camera: PluginDescriptor = {
      id: 'camera',
      name: 'Camera',
      description: 'Record a video on a node.',
      source: 'external',
      type: 'mqtt',
      config: {},
      capabilities: [
        {
          id: 'record',
          name: 'Record video',
          description: 'Record a video.',
          post_process: false,
          parameters: [{ name: 'node_id', type: 'string', required: false }],
        },
      ],
    };
    const h = await start([camera]);
    h.dispatcher.on('camera', (o) =>
      o.parameters?.node_id
        ? ok(`Recording on ${String(o.parameters.node_id)}.`)
        : { ...ok('Which node should I use? (e.g. test-node-1)'), success: false, ask_user: true, missing_parameters: ['node_id'] },
    );
    h.llm!.push(route('camera'));
    const user = await h.user('ivy');
    expect(await user.say('record a video')).toMatchObject({ kind: 'question', text: 'Which node should I use? (e.g. test-node-1)' });
    expect(await user.say('test-node-1')).toMatchObject({ kind: 'answer', text: 'Recording on test-node-1.' });
    expect(h.dispatcher.calls.map((c) => c.parameters?.node_id)).toEqual([undefined, 'test-node-1']);
    expect(h.llm!.requests).toHaveLength(1);
  });
});

describe('post-processing', () => {
  it('post_process: true → one model call with the prompt as system instruction and the raw output as input', async () => {
    const h = await start([weatherDescriptor, timeDescriptor]);
    h.dispatcher.on('weather', () => ok('Paris: 12C, rain'));
    h.llm!.push(route('weather', { city: 'Paris' }), { text: 'Take an umbrella: 12°C and rain in Paris.' });
    const user = await h.user('jo');
    expect(await user.say('will it rain in Paris?')).toMatchObject({
      kind: 'answer',
      text: 'Take an umbrella: 12°C and rain in Paris.',
      capability_id: 'fetch_weather',
    });
    expect(h.llm!.requests).toHaveLength(2);
    const post = h.llm!.requests[1]!;
    expect(post.messages[0]).toMatchObject({ role: 'system', content: weatherDescriptor.capabilities[0]!.post_process_prompt });
    expect(String(post.messages[1]!.content)).toContain('Paris: 12C, rain');
    expect(post.tools).toBeUndefined();
  });

  it('post_process: false → the raw output as is, no extra model call', async () => {
    const h = await start([weatherDescriptor]);
    h.dispatcher.on('weather', () => ok('Paris: 12C, rain'));
    h.llm!.push(route('weather', { city: 'Paris' }, 'raw_weather'));
    const user = await h.user('kim');
    expect(await user.say('raw weather for Paris')).toMatchObject({ kind: 'answer', text: 'Paris: 12C, rain', capability_id: 'raw_weather' });
    expect(h.llm!.requests).toHaveLength(1);
  });

  it('a model failure during post-processing falls back to the raw text; failures are never post-processed', async () => {
    const h = await start([weatherDescriptor]);
    let fail = false;
    h.dispatcher.on('weather', () =>
      fail ? { ...ok(''), success: false, error: 'upstream API said 503', error_code: 'plugin_error' } : ok('Paris: 12C, rain'),
    );
    h.llm!.push(route('weather', { city: 'Paris' }), { status: 500 });
    const user = await h.user('lee');
    expect(await user.say('weather in Paris')).toMatchObject({ kind: 'answer', text: 'Paris: 12C, rain' });
    fail = true;
    h.llm!.push(route('weather', { city: 'Paris' }));
    const failure = await user.say('weather in Paris again');
    expect(failure.kind).toBe('error');
    expect(failure.text).toContain('upstream API said 503');
    expect(h.llm!.requests).toHaveLength(3); // route, failed post-process, route — no post-process of the failure
  });
});

describe('failures and concurrency', () => {
  it('LLM unreachable → a clear message naming the URL; slash commands still work', async () => {
    harness = await startHarness({ plugins: [timeDescriptor], withLlm: true, llmUrl: 'http://127.0.0.1:1/v1' });
    harness.dispatcher.on('time', () => ok('It is 10:00.'));
    const user = await harness.user('max');
    const reply = await user.say('what time is it?');
    expect(reply.kind).toBe('error');
    expect(reply.text).toContain('The language model at http://127.0.0.1:1/v1 is unreachable');
    expect(reply.text).toContain('slash commands still work: /<plugin> <capability> key=value');
    expect(await user.say('/time now')).toMatchObject({ kind: 'answer', text: 'It is 10:00.' });
  });

  it('LLM answering HTTP 500 → the same clear message', async () => {
    const h = await start([timeDescriptor]);
    h.llm!.push({ status: 500 });
    const user = await h.user('ned');
    const reply = await user.say('what time is it?');
    expect(reply.kind).toBe('error');
    expect(reply.text).toMatch(/is unreachable: HTTP 500/);
  });

  it('plugin timeout and plugin error become clear messages', async () => {
    const h = await start([weatherDescriptor, notesDescriptor]);
    h.dispatcher.on('weather', () => ({ ...ok(''), success: false, error: 'no result within 2 s', error_code: 'timeout' }));
    h.dispatcher.on('notes', () => ({ ...ok(''), success: false, error: 'disk full', error_code: 'plugin_error' }));
    h.llm!.push(route('weather', { city: 'Paris' }), route('notes', { text: 'x' }, 'add_note'));
    const user = await h.user('oli');
    const timeout = await user.say('weather in Paris');
    expect(timeout.kind).toBe('error');
    expect(timeout.text).toMatch(/weather \(fetch_weather\) did not answer in time: no result within 2 s/);
    const error = await user.say('note x');
    expect(error.kind).toBe('error');
    expect(error.text).toMatch(/notes \(add_note\) failed: disk full/);
  });

  it('two users in parallel: a slow plugin call does not delay the other user', async () => {
    const h = await start([slowDescriptor, timeDescriptor]);
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    h.dispatcher.on('slowpoke', async () => {
      await released;
      return ok('Report ready.');
    });
    h.dispatcher.on('time', () => ok('It is 10:00.'));
    h.llm!.respondWith((request) => (lastUserText(request).includes('report') ? route('slowpoke') : route('time')));
    const slowUser = await h.user('pat');
    const fastUser = await h.user('quinn', 'whatsapp');
    const slow = slowUser.say('make the report');
    await new Promise((r) => setTimeout(r, 100));
    const fast = await fastUser.say('what time is it?');
    expect(fast).toMatchObject({ kind: 'answer', text: 'It is 10:00.', user_id: 'quinn' });
    expect(slowUser.replies).toHaveLength(0); // the slow one is still running
    release();
    expect(await slow).toMatchObject({ text: 'Report ready.', user_id: 'pat' });
  });
});

describe('what the model does wrong', () => {
  it('unknown plugin, unknown capability and malformed arguments go back to the model as tool errors', async () => {
    const h = await start([buyDescriptor({ default_parameters: { address: 'a', phone: 'p', contact_name: 'c' }, use_defaults_directly: true })]);
    h.llm!.push(
      { tool_calls: [{ name: 'route_to_plugin', arguments: { plugin_id: 'shop' } }] },
      { tool_calls: [{ name: 'route_to_plugin', arguments: { plugin_id: 'buy', capability_id: 'refund' } }] },
      { tool_calls: [{ name: 'route_to_plugin', arguments: '{"plugin_id": "buy", "parameters": {item: milk' }] },
      route('buy', { item: 'milk' }),
    );
    const user = await h.user('rae');
    expect(await user.say('buy milk')).toMatchObject({ kind: 'answer', text: 'Order placed for milk.' });
    expect(h.dispatcher.calls).toHaveLength(1);
    const toolMessages = h.llm!.requests[3]!.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(toolMessages[0]).toMatch(/no plugin "shop"/);
    expect(toolMessages[1]).toMatch(/no capability "refund".*place_order/);
    expect(toolMessages[2]).toMatch(/not valid JSON/);
  });

  it('arguments with a "__proto__" key go back to the model refused, before anything reads them', async () => {
    const h = await start([buyDescriptor({ default_parameters: { address: 'a', phone: 'p', contact_name: 'c' }, use_defaults_directly: true })]);
    h.llm!.push(
      { tool_calls: [{ name: 'route_to_plugin', arguments: '{"plugin_id": "buy", "parameters": {"__proto__": {"item": "milk"}}}' }] },
      route('buy', { item: 'milk' }),
    );
    const user = await h.user('ria');
    expect(await user.say('buy milk')).toMatchObject({ kind: 'answer', text: 'Order placed for milk.' });
    expect(h.dispatcher.calls).toHaveLength(1);
    const toolMessages = h.llm!.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(toolMessages[0]).toMatch(/arguments of route_to_plugin were refused \(a "__proto__" key at \/parameters\/__proto__ is refused/);
  });

  it('a model that loops calling tools is stopped at max rounds with a clear reply', async () => {
    const h = await start([buyDescriptor()], { max_rounds: 3 });
    h.llm!.respondWith(() => ({ tool_calls: [{ name: 'find_plugins', arguments: { query: 'anything' } }] }));
    const user = await h.user('sam');
    const reply = await user.say('buy milk');
    expect(reply.kind).toBe('error');
    expect(reply.text).toMatch(/kept calling tools.*3 rounds/);
    expect(h.llm!.requests).toHaveLength(3);
    expect(h.dispatcher.calls).toHaveLength(0);
  });

  it('shows the model only the top-k retrieved plugins even when more match', async () => {
    const frothers: PluginDescriptor[] = fillerDescriptors(8).map((d, i) => ({ ...d, id: `frother-${i}`, description: `Milk frother number ${i}.` }));
    const h = await start([buyDescriptor(), ...frothers]);
    h.llm!.push({ text: 'Which one?' });
    const user = await h.user('uma');
    await user.say('froth the milk');
    const prompt = systemPromptOf(h.llm!.requests[0]!);
    const shown = [...prompt.matchAll(/^### ([a-z0-9_-]+):/gm)].map((m) => m[1]);
    const all = await h.retrieval.search('froth the milk', { k: 100 });
    expect(all.hits.length).toBeGreaterThan(3);
    expect(shown).toEqual(all.hits.slice(0, 3).map((hit) => hit.plugin_id));
  });

  it('find_plugins lets the model reach a plugin that was not in the first top-k', async () => {
    const h = await start([timeDescriptor, notesDescriptor, ...fillerDescriptors(4)], { top_k: 1 });
    h.llm!.push({ tool_calls: [{ name: 'find_plugins', arguments: { query: 'note' } }] }, route('notes', { text: 'call mom' }, 'add_note'));
    const user = await h.user('tia');
    expect(await user.say('what time is it? also remember to call mom')).toMatchObject({ kind: 'answer', plugin_id: 'notes' });
    const toolResult = h.llm!.requests[1]!.messages.find((m) => m.role === 'tool');
    expect(String(toolResult?.content)).toContain('### notes');
    expect(h.dispatcher.calls[0]!.parameters).toEqual({ text: 'call mom' });
  });
});
