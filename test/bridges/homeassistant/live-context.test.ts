// GetLiveContext's answer, in the exact shape Home Assistant's GetLiveContextTool produces (JSON envelope
// from server.py's json.dumps, preamble line, PyYAML list), read into names, domains and areas.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseLiveContext } from '../../../src/bridges/homeassistant/live-context.js';
import { LIVE_CONTEXT_PREAMBLE, liveContextText, pythonJsonDumps } from '../../fixtures/homeassistant/ha-formats.js';
import { DEFAULT_ENTITIES } from '../../fixtures/homeassistant/stand-in.js';

// Verbatim from Home Assistant's own test of GetLiveContext (tests/helpers/test_llm.py), aliases included.
const HA_TEST_TEXT = `Live Context: An overview of the areas and the devices in this smart home:
- names: '1'
  domain: light
  state: unavailable
  areas: Test Area 2
- names: Kitchen
  domain: light
  state: 'on'
  attributes:
    temperature: '0.9'
    humidity: '65'
- names: Test Device, my test light
  domain: light
  state: unavailable
  areas: Test Area, Alternative name
`;

describe("the stand-in's GetLiveContext text", () => {
  it("is what Home Assistant's PyYAML dumper writes for the same entities", () => {
    const entities = [...DEFAULT_ENTITIES, { entity_id: 'switch.yes', names: ['Yes', 'Oui'], area: 'Garage: north', state: 'off' }];
    const sorted = [...entities].sort((a, b) => a.names[0]!.localeCompare(b.names[0]!));
    const infos = sorted.map((e) => ({
      names: e.names.join(', '),
      domain: e.entity_id.split('.')[0],
      state: e.state,
      ...(e.area ? { areas: e.area } : {}),
      ...(e.attributes ? { attributes: Object.fromEntries(Object.entries(e.attributes).map(([k, v]) => [k, String(v)])) } : {}),
    }));
    const script = fileURLToPath(new URL('../../fixtures/homeassistant/pyyaml_dump.py', import.meta.url));
    const dumped = execFileSync('/usr/bin/python3', [script], { input: JSON.stringify(infos), encoding: 'utf8' });
    expect(liveContextText(entities)).toBe(`${LIVE_CONTEXT_PREAMBLE}\n${dumped}`);
  });
});

describe('parseLiveContext', () => {
  it("reads Home Assistant's own example inside the tool's JSON envelope", async () => {
    const outcome = await parseLiveContext(pythonJsonDumps({ success: true, result: HA_TEST_TEXT }));
    expect(outcome).toEqual({
      ok: true,
      entities: [
        { names: ['1'], domain: 'light', areas: ['Test Area 2'] },
        { names: ['Kitchen'], domain: 'light', areas: [] },
        { names: ['Test Device', 'my test light'], domain: 'light', areas: ['Test Area', 'Alternative name'] },
      ],
    });
  });

  it('reads the bare text too, with quoting PyYAML applies (yes/no/on, numbers, colons)', async () => {
    const text = liveContextText([
      { entity_id: 'switch.yes', names: ['Yes'], area: 'Garage: north', state: 'on' },
      { entity_id: 'sensor.x', names: ['12.5'], state: '12.5' },
    ]);
    expect(text).toContain("- names: 'Yes'");
    expect(await parseLiveContext(text)).toEqual({
      ok: true,
      entities: [
        { names: ['12.5'], domain: 'sensor', areas: [] },
        { names: ['Yes'], domain: 'switch', areas: ['Garage: north'] },
      ],
    });
  });

  it('reports the failure Home Assistant answers when nothing is exposed, and malformed answers', async () => {
    expect(await parseLiveContext(pythonJsonDumps({ success: false, error: 'expose entities first' }))).toEqual({ ok: false, error: 'expose entities first' });
    expect(await parseLiveContext('{"success": true')).toMatchObject({ ok: false, error: expect.stringContaining('malformed JSON') });
    expect(await parseLiveContext(pythonJsonDumps({ success: true, result: 'Live Context: x:\nnames: [unclosed' }))).toMatchObject({ ok: false });
    expect(await parseLiveContext(pythonJsonDumps({ success: true, result: 'Live Context: x:\njust text' }))).toEqual({
      ok: false,
      error: "GetLiveContext's device list is not a list",
    });
    expect(await parseLiveContext(pythonJsonDumps({ success: true, result: 'Live Context: x:\n[]\n' }))).toEqual({ ok: true, entities: [] });
  });

  it("parses a big home's list off the event loop: timers keep firing meanwhile", async () => {
    const entities = Array.from({ length: 2000 }, (_, i) => ({
      entity_id: `light.l${i}`,
      names: [`Lamp ${i}`, `Alias ${i}`],
      area: `Room ${i % 40}`,
      state: 'on',
      attributes: { brightness: i % 255 },
    }));
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 1);
    const outcome = await parseLiveContext(pythonJsonDumps({ success: true, result: liveContextText(entities) }));
    clearInterval(timer);
    expect(outcome.ok && outcome.entities.length).toBe(2000);
    expect(outcome.ok && outcome.entities.find((e) => e.names[0] === 'Lamp 1999')).toEqual({
      names: ['Lamp 1999', 'Alias 1999'],
      domain: 'light',
      areas: ['Room 39'],
    });
    expect(ticks).toBeGreaterThan(0);
  });

  it('skips items without names or domain instead of failing the whole list', async () => {
    const text = 'Live Context: x:\n- names: Good\n  domain: light\n- domain: light\n- names: No domain\n- just a string\n';
    expect(await parseLiveContext(text)).toEqual({ ok: true, entities: [{ names: ['Good'], domain: 'light', areas: [] }] });
  });
});
