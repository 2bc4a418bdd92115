// Without an LLM: slash commands, direct routing of natural messages above the threshold with the
// resolver's dialogue (time; buy milk with confirmation), and suggestions below it. Over real MQTT.
import { afterEach, describe, expect, it } from 'vitest';
import { buyDescriptor, notesDescriptor, ok, timeDescriptor, weatherDescriptor } from '../fixtures/conversation/fakes.js';
import { startHarness, type Harness } from '../fixtures/conversation/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function start(): Promise<Harness> {
  harness = await startHarness({ plugins: [buyDescriptor(), timeDescriptor, weatherDescriptor, notesDescriptor], withLlm: false });
  harness.dispatcher.on('buy', (o) => ok(`Order placed for ${String(o.parameters?.item)} to ${String(o.parameters?.address)}.`));
  harness.dispatcher.on('time', (o) => ok(`It is 10:00 in ${String(o.parameters?.timezone)}.`));
  return harness;
}

describe('no-LLM dialogue', () => {
  it('asks for the time and gets it, with the timezone filled from the request', async () => {
    const h = await start();
    const user = await h.user('alice', 'cli');
    expect(await user.say('what time is it?', { timezone: 'Europe/Paris' })).toMatchObject({
      kind: 'answer',
      text: 'It is 10:00 in Europe/Paris.',
      plugin_id: 'time',
      capability_id: 'now',
    });
    expect(h.dispatcher.calls[0]).toMatchObject({ plugin_id: 'time', capability_id: 'now', parameters: { timezone: 'Europe/Paris' } });
  });

  it('buys milk through the confirmation dialogue: item from the text, profile values confirmed', async () => {
    const h = await start();
    h.profiles.set('bob', { name: 'Bob', address: '1 Elm St', phone: '555-0101' });
    const user = await h.user('bob', 'cli');
    const question = await user.say('buy me some milk');
    expect(question.kind).toBe('question');
    expect(question.text).toContain('1 Elm St');
    expect(question.text).toContain('555-0101');
    expect(h.dispatcher.calls).toHaveLength(0);
    expect(await user.say('yes')).toMatchObject({ kind: 'answer', text: 'Order placed for milk to 1 Elm St.' });
    expect(h.dispatcher.calls[0]!.parameters).toMatchObject({ item: 'milk', address: '1 Elm St', phone: '555-0101', contact_name: 'Bob' });
  });

  it('buys milk with nothing known: asks for everything, then places the order', async () => {
    const h = await start();
    const user = await h.user('cy', 'cli');
    const question = await user.say('buy me some milk');
    expect(question.kind).toBe('question');
    expect(question.text).not.toMatch(/\bitem\b/); // the extractor filled it
    expect(await user.say('9 Pine Rd, 555-0199, Cy')).toMatchObject({ kind: 'answer', text: 'Order placed for milk to 9 Pine Rd.' });
  });

  it('below the threshold the reply lists the closest plugins and how to call them; nothing is invoked', async () => {
    const h = await start();
    const user = await h.user('dee', 'cli');
    const reply = await user.say('weather is nice, buy nothing, no notes, the time flies');
    expect(reply.kind).toBe('answer');
    expect(reply.text).toContain('No language model is configured');
    expect(reply.text).toMatch(/\/(weather|buy|notes|time) /);
    const none = await user.say('tell me a joke');
    expect(none.text).toMatch(/No plugin matches/);
    expect(h.dispatcher.calls).toHaveLength(0);
  });

  it('slash commands: /help, /plugins, a call with quoted values, unknown plugin and capability', async () => {
    const h = await start();
    h.dispatcher.on('notes', (o) => ok(`Saved: ${String(o.parameters?.text)}`));
    const user = await h.user('eve', 'cli');
    expect((await user.say('/help')).text).toContain('/<plugin> <capability> key=value');
    const plugins = await user.say('/plugins');
    expect(plugins.text).toContain('/buy place_order item=<string>');
    expect(await user.say('/notes add_note text="call mom at 5"')).toMatchObject({ kind: 'answer', text: 'Saved: call mom at 5' });
    expect(await user.say('/shop buy')).toMatchObject({ kind: 'error' });
    expect((await user.say('/notes delete_all')).text).toContain('add_note, list_notes');
    expect((await user.say('/notes add_note text="unclosed')).kind).toBe('error');
    expect(h.dispatcher.calls).toHaveLength(1);
  });

  it('a slash call with a bad value is asked again with the reason', async () => {
    const number: import('../../src/protocol/types.js').PluginDescriptor = {
      id: 'thermo',
      name: 'Thermostat',
      description: 'Set the temperature.',
      source: 'external',
      type: 'mqtt',
      config: {},
      capabilities: [
        { id: 'set', name: 'Set', description: 'Set the target.', post_process: false, parameters: [{ name: 'celsius', type: 'number', required: true }] },
      ],
    };
    harness = await startHarness({ plugins: [number], withLlm: false });
    const user = await harness.user('fin', 'cli');
    const question = await user.say('/thermo set celsius=abc');
    expect(question.kind).toBe('question');
    expect(question.text).toContain('celsius');
    expect(await user.say('21')).toMatchObject({ kind: 'answer' });
    expect(harness.dispatcher.calls[0]!.parameters).toEqual({ celsius: 21 });
  });
});
