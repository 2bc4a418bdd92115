// Home Assistant's tool answers (intent responses and LLM tool results, as server.py serialises them)
// become sentences; the JSON stays in data.
import { describe, expect, it } from 'vitest';
import { readableResult } from '../../../src/bridges/homeassistant/tool-result.js';
import type { PluginResult } from '../../../src/protocol/types.js';
import { intentResponse, pythonJsonDumps } from '../../fixtures/homeassistant/ha-formats.js';

const ok = (text: string): PluginResult => ({ request_id: 'r1', plugin_id: 'homeassistant', success: true, text });

describe('readableResult', () => {
  it('an intent response without speech names what was done', () => {
    const raw = pythonJsonDumps(intentResponse([{ name: 'Kitchen Light', id: 'light.kitchen_light' }]));
    const result = readableResult('HassTurnOn', ok(raw));
    expect(result).toMatchObject({ success: true, text: 'Turned on Kitchen Light.', data: { response_type: 'action_done' } });
    expect(readableResult('HassUnknownIntent', ok(raw)).text).toBe('Done: Kitchen Light.');
  });

  it('uses the speech when Home Assistant gives one, and reports failed targets', () => {
    const withSpeech = {
      speech: { plain: { speech: 'Turned on the lights', extra_data: null } },
      response_type: 'action_done',
      data: { targets: [], success: [], failed: [] },
    };
    expect(readableResult('HassTurnOn', ok(pythonJsonDumps(withSpeech))).text).toBe('Turned on the lights');
    const partial = {
      speech: {},
      response_type: 'action_done',
      data: { targets: [], success: [{ name: 'A', type: 'entity', id: 'light.a' }], failed: [{ name: 'B', type: 'entity', id: 'light.b' }] },
    };
    expect(readableResult('HassTurnOff', ok(pythonJsonDumps(partial)))).toMatchObject({ success: true, text: 'Turned off A. Failed: B.' });
  });

  it('an error response is a failure with its code', () => {
    const error = { speech: {}, response_type: 'error', data: { code: 'no_valid_targets' } };
    expect(readableResult('HassTurnOn', ok(pythonJsonDumps(error)))).toMatchObject({
      success: false,
      error: 'Home Assistant could not do that (no_valid_targets)',
      error_code: 'plugin_error',
    });
  });

  it('LLM tool results: the result text, or the error', () => {
    expect(readableResult('GetLiveContext', ok(pythonJsonDumps({ success: true, result: 'Live Context: ...' }))).text).toBe('Live Context: ...');
    expect(readableResult('GetDateTime', ok(pythonJsonDumps({ success: true, result: { date: '2026-11-26' } }))).text).toBe('{"date":"2026-11-26"}');
    expect(readableResult('GetLiveContext', ok(pythonJsonDumps({ success: false, error: 'Area x does not exist' })))).toMatchObject({
      success: false,
      error: 'Area x does not exist',
    });
  });

  it('tool errors stay failures (plugin_error); non-JSON text is left alone', () => {
    const failed: PluginResult = { request_id: 'r1', plugin_id: 'homeassistant', success: false, error: 'Error calling tool: boom' };
    expect(readableResult('HassTurnOn', failed)).toEqual({ ...failed, error_code: 'plugin_error' });
    expect(readableResult('HassTurnOn', ok('plain words'))).toEqual(ok('plain words'));
  });
});
