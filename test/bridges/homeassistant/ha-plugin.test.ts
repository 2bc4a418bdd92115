// The plugin "homeassistant" on the real Core against the stand-in Home Assistant (real MCP SDK server
// over streamable HTTP, bearer check): registration with Home Assistant's tools, calls reaching it with
// the right arguments, the entity list in the plugin's text, and the failures (unreachable, 401, 404).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HomeAssistantAdapter } from '../../../src/bridges/homeassistant/ha-adapter.js';
import type { PluginResult } from '../../../src/protocol/types.js';
import type { PluginRecord } from '../../../src/registry/record.js';
import { startTestCore, type TestCore } from '../../helpers/core.js';
import { startStandInHomeAssistant, type StandInHomeAssistant } from '../../fixtures/homeassistant/stand-in.js';

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function haCore(stand: StandInHomeAssistant, token = stand.token): Promise<TestCore> {
  return startTestCore({ overrides: { homeassistant: { url: stand.url, token, refresh_sec: 3600, timeout_sec: 5 } } });
}

const plugin = (core: TestCore): PluginRecord | undefined => core.ctx.registry.get('homeassistant');
const adapterOf = (core: TestCore): HomeAssistantAdapter => core.ctx.adapters.get('homeassistant') as HomeAssistantAdapter;

describe('Home Assistant as a plugin source', () => {
  let stand: StandInHomeAssistant;
  let core: TestCore;

  beforeAll(async () => {
    stand = await startStandInHomeAssistant();
    core = await haCore(stand);
    await waitFor(
      () => plugin(core)?.state === 'online' && plugin(core)?.descriptor.description_long !== undefined,
      15_000,
      'homeassistant online with its entities',
    );
  }, 30_000);

  afterAll(async () => {
    await core?.cleanup();
    await stand?.close();
  });

  it("registers homeassistant with Home Assistant's tools as capabilities and their schemas", () => {
    const record = plugin(core)!;
    expect(record.descriptor).toMatchObject({ id: 'homeassistant', name: 'Home Assistant', type: 'homeassistant', source: 'external' });
    expect(record.owner).toBe('bridge:homeassistant');
    expect(record.descriptor.capabilities.map((c) => c.id).sort()).toEqual(
      ['GetDateTime', 'GetLiveContext', 'HassClimateSetTemperature', 'HassLightSet', 'HassTurnOff', 'HassTurnOn'].sort(),
    );
    const lightSet = record.descriptor.capabilities.find((c) => c.id === 'HassLightSet')!;
    expect(lightSet.input_schema).toMatchObject({ type: 'object', properties: { brightness: { type: 'integer', minimum: 0, maximum: 100 } } });
    expect(lightSet.parameters.every((p) => !p.required)).toBe(true);
  });

  it('the token never reaches the registry or the API', async () => {
    const view = await core.api<Record<string, unknown>>('GET', '/api/plugins/homeassistant');
    expect(view.status).toBe(200);
    expect(JSON.stringify(view.body)).not.toContain(stand.token);
    expect(JSON.stringify(plugin(core))).not.toContain(stand.token);
    expect(plugin(core)!.descriptor.config).toEqual({ url: stand.url, max_concurrency: 4 });
  });

  it("indexes the exposed entities' names and areas from GetLiveContext", () => {
    const record = plugin(core)!;
    expect(record.descriptor.description_long).toContain('Kitchen Light / Kitchen Lamp (light, Kitchen)');
    expect(record.descriptor.description_long).toContain('Garage Door (cover, Garage)');
    expect(record.descriptor.keywords).toEqual(expect.arrayContaining(['Kitchen', 'Garage', 'Living Room', 'Bedroom', 'Hallway']));
    expect(stand.calls.filter((c) => c.name === 'GetLiveContext').length).toBeGreaterThanOrEqual(1);
  });

  it('a call through the dispatcher reaches Home Assistant with the right arguments and reads as a sentence', async () => {
    const before = stand.calls.length;
    const res = await core.api<PluginResult>('POST', '/v1/plugins/homeassistant/tools/HassTurnOn/run', { name: 'Kitchen Light' });
    expect(res.status).toBe(200);
    expect(stand.calls.slice(before)).toEqual([{ name: 'HassTurnOn', arguments: { name: 'Kitchen Light' } }]);
    expect(res.body).toMatchObject({ success: true, text: 'Turned on Kitchen Light.', data: { response_type: 'action_done' } });
    expect(stand.entities.find((e) => e.entity_id === 'light.kitchen_light')?.state).toBe('on');
  });

  it('invalid parameters are refused before Home Assistant is called; its own errors come back as failures', async () => {
    const before = stand.calls.length;
    const bad = await core.api<PluginResult>('POST', '/v1/plugins/homeassistant/tools/HassLightSet/run', { name: 'Kitchen Light', brightness: 150 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ success: false, error_code: 'invalid_params' });
    expect(stand.calls.length).toBe(before);
    const unknown = await core.api<PluginResult>('POST', '/v1/plugins/homeassistant/tools/HassTurnOff/run', { name: 'Dungeon Light' });
    expect(unknown.body).toMatchObject({ success: false, error_code: 'plugin_error' });
    expect(unknown.body.error).toContain('Error calling tool: <MatchFailedError');
    expect(stand.calls.at(-1)).toEqual({ name: 'HassTurnOff', arguments: { name: 'Dungeon Light' } });
  });

  it('a newly exposed entity is indexed on refresh; one no longer exposed disappears', async () => {
    stand.entities.push({ entity_id: 'switch.aquarium_pump', names: ['Aquarium Pump'], area: 'Study', state: 'on' });
    stand.entities = stand.entities.filter((e) => e.entity_id !== 'cover.garage_door');
    expect(plugin(core)!.descriptor.description_long).not.toContain('Aquarium Pump');
    await adapterOf(core).refresh();
    const text = plugin(core)!.descriptor.description_long!;
    expect(text).toContain('Aquarium Pump (switch, Study)');
    expect(text).not.toContain('Garage Door');
    expect(plugin(core)!.state).toBe('online');
  });

  it('the refresh timer re-reads the entities every refresh_sec', async () => {
    const timed = await startStandInHomeAssistant();
    const timedCore = await startTestCore({ overrides: { homeassistant: { url: timed.url, token: timed.token, refresh_sec: 5, timeout_sec: 5 } } });
    try {
      await waitFor(() => timedCore.ctx.registry.get('homeassistant')?.descriptor.description_long !== undefined, 15_000, 'first entity list');
      timed.entities.push({ entity_id: 'light.porch', names: ['Porch Light'], area: 'Porch', state: 'off' });
      await waitFor(() => timedCore.ctx.registry.get('homeassistant')!.descriptor.description_long!.includes('Porch Light'), 15_000, 'the timer refresh');
    } finally {
      await timedCore.cleanup();
      await timed.close();
    }
  }, 30_000);
});

describe('Home Assistant failures', () => {
  it('unreachable: stale with the reason, retried with backoff, online once Home Assistant is back', async () => {
    const stand = await startStandInHomeAssistant();
    await stand.pause();
    const core = await haCore(stand);
    try {
      await waitFor(() => plugin(core)?.state_reason?.includes('unreachable') === true, 10_000, 'the unreachable reason');
      expect(plugin(core)).toMatchObject({ state: 'stale' });
      expect(plugin(core)!.state_reason).toContain(`Home Assistant at ${stand.url} is unreachable`);
      await stand.resume();
      await waitFor(() => plugin(core)?.state === 'online', 20_000, 'reconnect after Home Assistant is back');
      expect(plugin(core)!.descriptor.capabilities.length).toBeGreaterThan(0);
    } finally {
      await core.cleanup();
      await stand.close();
    }
  }, 40_000);

  it('401: state error "Home Assistant refused the token", and no retries that would show up as failed logins', async () => {
    const stand = await startStandInHomeAssistant();
    const core = await haCore(stand, 'a-wrong-token');
    try {
      await waitFor(() => plugin(core)?.state === 'error', 10_000, 'the error state');
      expect(plugin(core)!.state_reason).toMatch(/^Home Assistant refused the token \(HTTP 401 from .*\/api\/mcp\)/);
      const attempts = stand.requests.filter((r) => r.status === 401).length;
      expect(attempts).toBeGreaterThanOrEqual(1);
      await new Promise((r) => setTimeout(r, 2_500));
      expect(stand.requests.filter((r) => r.status === 401).length).toBe(attempts);
      expect(JSON.stringify(plugin(core))).not.toContain('a-wrong-token');
    } finally {
      await core.cleanup();
      await stand.close();
    }
  }, 30_000);

  it('404: state error saying how to enable the MCP Server integration; connects once it is enabled', async () => {
    const stand = await startStandInHomeAssistant({ mcpEnabled: false });
    const core = await haCore(stand);
    try {
      await waitFor(() => plugin(core)?.state === 'error', 10_000, 'the error state');
      expect(plugin(core)!.state_reason).toContain('HTTP 404');
      expect(plugin(core)!.state_reason).toContain('enable the "Model Context Protocol Server" integration');
      stand.mcpEnabled = true;
      await waitFor(() => plugin(core)?.state === 'online', 20_000, 'online after enabling the integration');
    } finally {
      await core.cleanup();
      await stand.close();
    }
  }, 40_000);

  it('a restart keeps the capabilities and entities while reconnecting; removing the config removes the plugin', async () => {
    const stand = await startStandInHomeAssistant();
    const first = await haCore(stand);
    await waitFor(() => plugin(first)?.descriptor.description_long !== undefined, 15_000, 'entities');
    await first.cleanup({ keepData: true });
    await stand.pause();
    const second = await startTestCore({ dataDir: first.dataDir, overrides: { homeassistant: { url: stand.url, token: stand.token, timeout_sec: 5 } } });
    try {
      expect(plugin(second)!.state).toBe('stale');
      expect(plugin(second)!.descriptor.capabilities.length).toBe(6);
      expect(plugin(second)!.descriptor.description_long).toContain('Kitchen Light');
      await waitFor(() => plugin(second)?.state_reason?.includes('unreachable') === true, 10_000, 'the unreachable reason');
      const refused = await second.api<PluginResult>('POST', '/v1/plugins/homeassistant/tools/HassTurnOn/run', { name: 'Kitchen Light' });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ success: false, error_code: 'stale' });
      expect(refused.body.error).toContain('is unreachable');
    } finally {
      await second.cleanup({ keepData: true });
    }
    const third = await startTestCore({ dataDir: first.dataDir });
    try {
      expect(plugin(third)).toBeUndefined();
    } finally {
      await third.cleanup();
      await stand.close();
    }
  }, 40_000);
});
