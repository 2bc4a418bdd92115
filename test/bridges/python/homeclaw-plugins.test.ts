// HomeClaw's Python built-ins in the host: a BasePlugin subclass with plugin.yaml (type inline), a
// config_file, capability methods reading parameters from self.config and replying through coreInst; the
// legacy config.yml + plugin.py form with run(request); hot reload of a plugin folder; and config_file for
// a JavaScript built-in too.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive, waitFor } from '../../adapters/helpers.js';
import { FIXTURES, logged, startHarness, type Harness } from './harness.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe('HomeClaw Python built-ins', () => {
  it('runs a BasePlugin subclass: config_file, initialize(), capability methods, run() replying through coreInst', async () => {
    harness = await startHarness({ folders: ['quotes'] });
    const record = harness.registry.get('quotes')!;
    expect(record).toMatchObject({ state: 'online' });
    expect(record.descriptor).toMatchObject({ type: 'python', version: '1.1.0', name: 'Quotes Plugin' });
    // config_file: settings.yml (not config.yml) is the runtime config.
    expect(record.descriptor.config).toMatchObject({ config_file: 'settings.yml', signature: '— HomeClaw', default_parameters: { topic: 'courage' } });
    // initialize() ran with the manifest's description in its config.
    await waitFor(() => logged(harness!, "quotes initialised with description 'Motivational quotes on a topic.").length === 1);

    const first = await harness.invoke('quotes', 'quote_about', { topic: 'patience' });
    expect(first).toMatchObject({ success: true, text: 'Patience is bitter, but its fruit is sweet. — HomeClaw (for alice, call 1)' });
    // One instance for the host's life: state carries over between calls.
    expect((await harness.invoke('quotes', 'quote_about', { topic: 'courage' })).text).toBe('Courage is grace under pressure. — HomeClaw (for alice, call 2)');
    // run() returns nothing and sends its reply with coreInst.send_response_to_request_channel.
    expect(await harness.invoke('quotes', 'run')).toMatchObject({
      success: true,
      text: 'Quote of the day for hello there: Patience is bitter, but its fruit is sweet.',
    });
  });

  it("runs HomeClaw's legacy layout: config.yml with the id, plugin.py with run(request)", async () => {
    harness = await startHarness({ folders: ['echo'] });
    const record = harness.registry.get('echo')!;
    expect(record.descriptor).toMatchObject({
      description: 'Repeats what the user said. Use when the user wants something echoed back.',
      version: '0.9.0',
      type: 'python',
    });
    expect(record.descriptor.config).toMatchObject({ prefix: 'echo:' });
    expect(record.descriptor.capabilities.map((c) => c.id)).toEqual(['run']);
    expect(await harness.invoke('echo', 'run', { user_input: 'good morning' })).toMatchObject({
      success: true,
      text: 'echo: good morning',
      data: { user: 'alice', capability: 'run' },
    });
    // Without user_input among the parameters, the request's own user_input is the text.
    expect((await harness.invoke('echo', 'run')).text).toBe('echo: hello there');
  });

  it('asks for config.class when plugin.py defines several plugin classes, and reports initialize() failures', async () => {
    harness = await startHarness();
    const dir = join(harness.pluginsDir, 'twins');
    mkdirSync(dir);
    writeFileSync(join(dir, 'plugin.yaml'), 'id: twins\nname: Twins\ndescription: Two classes.\ntype: python\n');
    writeFileSync(
      join(dir, 'plugin.py'),
      'from base.BasePlugin import BasePlugin\n\nclass LeftPlugin(BasePlugin):\n    async def run(self):\n        return "left"\n\n' +
        'class RightPlugin(BasePlugin):\n    def initialize(self):\n        super().initialize()\n        if self.config.get("fail"):\n            raise RuntimeError("no API key configured")\n\n    async def run(self):\n        return "right"\n',
    );
    await harness.loader.reload(dir);
    expect(harness.registry.get('twins')).toMatchObject({
      state: 'error',
      state_reason: 'plugin.py defines several plugin classes (LeftPlugin, RightPlugin): set config.class in plugin.yaml to choose one',
    });
    writeFileSync(join(dir, 'plugin.yaml'), 'id: twins\nname: Twins\ndescription: Two classes.\ntype: python\nconfig: { class: RightPlugin }\n');
    await harness.loader.reload(dir);
    expect((await harness.invoke('twins', 'run')).text).toBe('right');
    writeFileSync(join(dir, 'config.yml'), 'fail: true\n');
    await harness.loader.reload(dir);
    expect(harness.registry.get('twins')).toMatchObject({
      state: 'error',
      state_reason: 'RightPlugin.initialize() failed: RuntimeError: no API key configured',
    });
  });

  it('reloads a Python plugin folder when plugin.py changes and retires the old host', async () => {
    harness = await startHarness({ folders: ['echo'], hot_reload: true });
    const before = harness.bridge.adapter.pidsOf('echo')[0]!;
    // A file the plugin writes for itself (data, not code) reloads the folder but keeps the running host.
    writeFileSync(join(harness.pluginsDir, 'echo', 'notes.json'), '{"seen": 1}');
    await waitFor(() => logged(harness!, 'Loaded built-in plugin echo').length === 2, 10_000);
    expect(harness.bridge.adapter.pidsOf('echo')).toEqual([before]);
    const file = join(harness.pluginsDir, 'echo', 'plugin.py');
    writeFileSync(
      file,
      readFileSync(join(FIXTURES, 'folders', 'echo', 'plugin.py'), 'utf8').replace("f\"{self.config['prefix']} ", "f\"{self.config['prefix']} reloaded "),
    );
    await waitFor(async () => (await harness!.invoke('echo', 'run', { user_input: 'x' })).text === 'echo: reloaded x', 10_000, 100);
    await waitFor(() => !isAlive(before), 5000);
    expect(harness.bridge.adapter.pidsOf('echo')).toHaveLength(1);
    expect(harness.bridge.adapter.pidsOf('echo')[0]).not.toBe(before);

    // A broken edit: state error with the reason, and the old host does not linger.
    const working = harness.bridge.adapter.pidsOf('echo')[0]!;
    writeFileSync(file, 'class EchoPlugin:\n    def run(self, request):\n        return 1 +\n');
    await waitFor(() => harness!.registry.get('echo')?.state === 'error', 10_000);
    expect(harness.registry.get('echo')?.state_reason).toContain('SyntaxError');
    await waitFor(() => !isAlive(working), 5000);
  });

  it('reads config_file for a JavaScript built-in too, and refuses one that points outside the folder', async () => {
    harness = await startHarness();
    const dir = join(harness.pluginsDir, 'greeter');
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'plugin.yaml'),
      'id: greeter\nname: Greeter\ndescription: Greets.\nconfig: { config_file: greeter.yml }\ncapabilities:\n  - { id: greet, name: Greet, description: Greets., parameters: [] }\n',
    );
    writeFileSync(join(dir, 'greeter.yml'), 'greeting: Ahoy\n');
    writeFileSync(join(dir, 'config.yml'), 'greeting: Not me\n');
    writeFileSync(join(dir, 'index.mjs'), 'export function greet(params, ctx) { return ctx.config.greeting; }\n');
    await harness.loader.reload(dir);
    expect(harness.registry.get('greeter')?.descriptor.type).toBe('inline');
    expect((await harness.invoke('greeter', 'greet')).text).toBe('Ahoy');

    writeFileSync(join(dir, 'plugin.yaml'), 'id: greeter\nname: Greeter\ndescription: Greets.\nconfig: { config_file: ../../secrets.yml }\n');
    await harness.loader.reload(dir);
    expect(harness.registry.get('greeter')).toMatchObject({
      state: 'error',
      state_reason: 'config.config_file "../../secrets.yml" points outside the plugin folder',
    });
  });
});
