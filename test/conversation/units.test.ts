// Pure parts: slash parsing, the free-text extractor, the tool loop's bounds, the system prompt.
import { describe, expect, it } from 'vitest';
import { extractFreeText, freeTextParameter } from '../../src/conversation/no-llm-router.js';
import type { ParameterResolver } from '../../src/conversation/resolver-api.js';
import { parseSlashCommand } from '../../src/conversation/slash-commands.js';
import { buildSystemPrompt } from '../../src/conversation/system-prompt.js';
import { buildSystemContext } from '../../src/conversation/system-context.js';
import { runToolLoop } from '../../src/conversation/tool-loop.js';
import type { LlmClient } from '../../src/conversation/llm-client.js';
import { buyDescriptor, notesDescriptor, recordOf, weatherDescriptor } from '../fixtures/conversation/fakes.js';

describe('slash commands', () => {
  it('parses plugin, capability and quoted key=value pairs', () => {
    expect(parseSlashCommand('/buy place_order item="oat milk" address=\'1 Elm St\' n=2')).toEqual({
      kind: 'call',
      plugin_id: 'buy',
      capability_id: 'place_order',
      parameters: { item: 'oat milk', address: '1 Elm St', n: '2' },
    });
    expect(parseSlashCommand('/buy item=milk')).toEqual({ kind: 'call', plugin_id: 'buy', parameters: { item: 'milk' } });
    expect(parseSlashCommand('/help')).toEqual({ kind: 'help' });
    expect(parseSlashCommand('/plugins')).toEqual({ kind: 'plugins' });
    expect(parseSlashCommand('/buy a b').kind).toBe('invalid');
    expect(parseSlashCommand('/').kind).toBe('invalid');
    expect(parseSlashCommand('/buy x="a \\" b"')).toMatchObject({ parameters: { x: 'a " b' } });
  });
});

describe('free-text extractor', () => {
  const buy = recordOf(buyDescriptor());
  const place = buy.descriptor.capabilities[0]!;
  it('fills the single free-text parameter from the words after the plugin word', () => {
    expect(freeTextParameter(place)?.name).toBe('item');
    expect(extractFreeText(buy, place, 'buy me some milk')).toEqual({ item: 'milk' });
    expect(extractFreeText(buy, place, 'Please order two loaves of bread!')).toEqual({ item: 'two loaves of bread' });
    expect(extractFreeText(buy, place, 'I want milk')).toEqual({}); // no trigger word → the resolver asks
    const weather = recordOf(weatherDescriptor);
    expect(extractFreeText(weather, weather.descriptor.capabilities[0]!, "what's the weather in Paris today?")).toEqual({ city: 'Paris' });
    const notes = recordOf(notesDescriptor);
    expect(extractFreeText(notes, notes.descriptor.capabilities[0]!, 'note that I need to call mom')).toEqual({ text: 'I need to call mom' });
  });
});

describe('tool loop', () => {
  it('stops after max rounds and reports it', async () => {
    let calls = 0;
    const llm: LlmClient = {
      baseUrl: 'x',
      model: 'm',
      complete: async () => {
        calls++;
        return { content: null, tool_calls: [{ id: `c${calls}`, name: 'find_plugins', arguments: '{"query":"x"}' }] };
      },
    };
    const outcome = await runToolLoop({ llm, messages: [], tools: [], maxRounds: 2, execute: async () => ({ kind: 'to_model', content: 'nothing' }) });
    expect(outcome).toEqual({ kind: 'max_rounds', rounds: 2 });
    expect(calls).toBe(2);
  });
});

describe('system prompt', () => {
  it('lists the given plugins with only the parameters the resolver makes visible, and the time', () => {
    const resolver: ParameterResolver = {
      resolve: () => {
        throw new Error('unused');
      },
      llmVisibleParameters: (_record, capability) => capability.parameters.filter((p) => p.name === 'item' || p.name === 'city'),
    };
    const system = buildSystemContext({ now: new Date('2025-01-31T08:05:00Z'), timezone: 'Europe/Paris', fallbackTimezone: 'UTC', user_id: 'u', channel: 'c' });
    expect(system.datetime).toBe('2025-01-31T09:05:00+01:00');
    const prompt = buildSystemPrompt({ plugins: [{ record: recordOf(buyDescriptor()) }], resolver, system });
    expect(prompt).toContain('### buy: Buy Plugin');
    expect(prompt).toContain('item (string, required)');
    expect(prompt).not.toContain('address');
    expect(prompt).toContain('2025-01-31T09:05:00+01:00 (Europe/Paris)');
  });
});

describe('extractor on the shipped built-in manifests', () => {
  it('buy and notes: fills item / text; time: nothing to fill', async () => {
    const { readFileSync, existsSync } = await import('node:fs');
    const { parse } = await import('yaml');
    const load = (id: string) => {
      const manifest = parse(
        readFileSync(new URL(`../../plugins/${id}/plugin.yaml`, import.meta.url), 'utf8'),
      ) as import('../../src/protocol/types.js').PluginDescriptor;
      return recordOf({ ...manifest, source: 'built-in', type: 'inline', config: {} });
    };
    const buy = load('buy');
    expect(extractFreeText(buy, buy.descriptor.capabilities[0]!, 'buy me some milk')).toEqual({ item: 'milk' });
    if (existsSync(new URL('../../plugins/notes/plugin.yaml', import.meta.url))) {
      const notes = load('notes');
      const save = notes.descriptor.capabilities.find((c) => c.id === 'save_note')!;
      expect(extractFreeText(notes, save, 'Note that the plumber comes on Tuesday')).toEqual({ text: 'plumber comes on Tuesday' });
    }
    if (existsSync(new URL('../../plugins/time/plugin.yaml', import.meta.url))) {
      const time = load('time');
      expect(extractFreeText(time, time.descriptor.capabilities[0]!, 'what time is it in Tokyo')).toEqual({});
    }
  });
});
