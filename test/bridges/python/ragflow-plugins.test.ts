// RAGFlow's plugin form in the Python host: RAGFlow's README demo bad_calculator (its snippets joined), files in
// RAGFlow's own form (both import paths, the earlier dict-taking invoke), embedded_plugins/ scanned
// recursively, a RAGFlow class alone in a plugin folder, bad metadata, and hot reload of an embedded file.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive, waitFor } from '../../adapters/helpers.js';
import { FIXTURES, logged, startHarness, type Harness } from './harness.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe('RAGFlow LLM tool plugins', () => {
  it("loads RAGFlow's demo bad_calculator from embedded_plugins/llm_tools and calls invoke(**params)", async () => {
    harness = await startHarness({ embedded: ['seed'] });
    const record = harness.registry.get('bad_calculator')!;
    expect(record).toMatchObject({ owner: 'builtin', state: 'online' });
    expect(record.descriptor).toMatchObject({
      id: 'bad_calculator',
      name: 'bad_calculator',
      description: 'A tool to calculate the sum of two numbers (will give wrong answer)',
      version: '1.0.0',
      type: 'python',
      source: 'built-in',
    });
    expect(record.descriptor.capabilities).toEqual([
      expect.objectContaining({
        id: 'bad_calculator',
        parameters: [
          expect.objectContaining({ name: 'a', type: 'number', required: true, description: 'The first number' }),
          expect.objectContaining({ name: 'b', type: 'number', required: true, description: 'The second number' }),
        ],
      }),
    ]);
    // The demo's own log lines: the recursive import and the plugin with its _version_.
    expect(logged(harness, 'Recursively importing plugins from path')).toHaveLength(1);
    expect(logged(harness, 'Loaded llm_tools plugin BadCalculatorPlugin version 1.0.0')).toHaveLength(1);
    expect(logged(harness, 'Loaded built-in plugin bad_calculator 1.0.0')).toHaveLength(1);

    const result = await harness.invoke('bad_calculator', 'bad_calculator', { a: 1, b: 2 });
    expect(result).toMatchObject({ success: true, text: '103' });
    const again = await harness.invoke('bad_calculator', 'bad_calculator', { a: 40, b: 2.5 });
    expect(again.text).toBe('142.5');
    // Missing b is refused by the Core before Python sees it.
    expect(await harness.invoke('bad_calculator', 'bad_calculator', { a: 1 })).toMatchObject({ success: false, error_code: 'invalid_params' });
  });

  it("loads files in RAGFlow's form unchanged, from nested folders, through both import paths", async () => {
    harness = await startHarness({ embedded: ['ragflow'] });
    expect(harness.registry.get('unit_converter')?.descriptor).toMatchObject({ version: '2.1.0', type: 'python' });
    expect(await harness.invoke('unit_converter', 'unit_converter', { value: 10, unit: 'm' })).toMatchObject({ success: true, text: '10 m = 32.81 ft' });
    // invoke's own logging reaches the Core's log.
    await waitFor(() => logged(harness!, 'Unit converter was called with arguments 10 and m').length === 1);

    // agent.plugin.llm_tool_plugin, two levels down, with an optional parameter left out and then given.
    expect(harness.registry.get('word_counter')?.descriptor.version).toBe('0.3.0');
    expect((await harness.invoke('word_counter', 'word_counter', { text: 'a b a' })).text).toBe('3');
    expect((await harness.invoke('word_counter', 'word_counter', { text: 'a b a', unique: true })).text).toBe('2');

    // The earlier form: JSON Schema parameters and invoke(self, arguments); print() goes to the log, not the protocol.
    const legacy = harness.registry.get('legacy_echo')!.descriptor.capabilities[0]!;
    expect(legacy.parameters).toEqual([
      expect.objectContaining({ name: 'word', type: 'string', required: true }),
      expect.objectContaining({ name: 'times', type: 'integer', required: false }),
    ]);
    expect((await harness.invoke('legacy_echo', 'legacy_echo', { word: 'hey', times: 3 })).text).toBe('hey hey hey');
    await waitFor(() => logged(harness!, 'Echo tool called with arguments').length === 1);

    // A Python exception is an error result with its message, and the host keeps serving.
    const bad = await harness.invoke('unit_converter', 'unit_converter', { value: 1, unit: 'yards' });
    expect(bad).toMatchObject({ success: false, error_code: 'plugin_error' });
    expect(bad.error).toContain("ValueError: unknown unit 'yards': use m or ft");
    expect((await harness.invoke('unit_converter', 'unit_converter', { value: 1, unit: 'ft' })).text).toBe('1 ft = 0.30 m');
    // One host per file: the three files run in three processes.
    const pids = ['unit_converter', 'word_counter', 'legacy_echo'].map((id) => harness!.bridge.adapter.pidsOf(id)[0]);
    expect(new Set(pids).size).toBe(3);
  });

  it('runs a RAGFlow class that sits alone in a plugin folder as plugin.py', async () => {
    harness = await startHarness({ folders: ['calculator'] });
    expect(harness.registry.get('multiplier')?.descriptor).toMatchObject({ type: 'python', version: '1.4.2' });
    expect(harness.registry.get('multiplier')?.descriptor.config).toMatchObject({ class: 'MultiplierPlugin', module: 'plugin.py' });
    expect((await harness.invoke('multiplier', 'multiplier', { a: 6, b: 7 })).text).toBe('42');
    expect(logged(harness, 'Loaded built-in plugin multiplier 1.4.2')).toHaveLength(1);
  });

  it('puts a plugin whose get_metadata() is invalid in state error with the reason, and never routes to it', async () => {
    harness = await startHarness({ folders: ['broken_meta', 'calculator'] });
    const record = harness.registry.get('broken_meta')!;
    expect(record.state).toBe('error');
    expect(record.state_reason).toContain('BrokenPlugin.get_metadata() is invalid');
    expect(record.state_reason).toContain('/parameters/when/type');
    expect(await harness.invoke('broken_meta', 'invoke')).toMatchObject({ success: false });
    // Its host is gone; the healthy neighbour is unaffected.
    expect(harness.bridge.adapter.pidsOf('broken_meta')).toEqual([]);
    expect((await harness.invoke('multiplier', 'multiplier', { a: 2, b: 2 })).text).toBe('4');
  });

  it('reloads an embedded file when it changes, and removes its plugin when it is deleted', async () => {
    harness = await startHarness({ embedded: ['seed'], hot_reload: true });
    const file = join(harness.pluginsDir, 'embedded_plugins', 'llm_tools', 'bad_calculator.py');
    const before = harness.bridge.adapter.pidsOf('bad_calculator')[0]!;
    const source = readFileSync(join(FIXTURES, 'seed', 'embedded_plugins', 'llm_tools', 'bad_calculator.py'), 'utf8');
    writeFileSync(file, source.replace('a + b + 100', 'a + b + 1000').replace('_version_ = "1.0.0"', '_version_ = "1.0.1"'));
    await waitFor(() => harness!.registry.get('bad_calculator')?.descriptor.version === '1.0.1', 10_000);
    expect((await harness.invoke('bad_calculator', 'bad_calculator', { a: 1, b: 2 })).text).toBe('1003');
    await waitFor(() => !isAlive(before), 5000);

    // A syntax error: state error with the reason; fixing it brings the plugin back.
    writeFileSync(file, 'def broken(:\n');
    await waitFor(() => harness!.registry.get('bad_calculator')?.state === 'error', 10_000);
    expect(harness.registry.get('bad_calculator')?.state_reason).toContain('SyntaxError');
    writeFileSync(file, source);
    await waitFor(() => harness!.registry.get('bad_calculator')?.state === 'online', 10_000);
    expect((await harness.invoke('bad_calculator', 'bad_calculator', { a: 1, b: 2 })).text).toBe('103');

    const last = harness.bridge.adapter.pidsOf('bad_calculator')[0]!;
    rmSync(file);
    await waitFor(() => harness!.registry.get('bad_calculator') === undefined, 10_000);
    await waitFor(() => !isAlive(last), 5000);
    expect(existsSync(file)).toBe(false);
  });
});
