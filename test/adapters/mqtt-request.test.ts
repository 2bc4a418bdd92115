// The invoke payload over MQTT: short for small devices, the long context only for capabilities that
// ask for it with wants_context.
import { describe, expect, it } from 'vitest';
import { mqttRequestPayload } from '../../src/adapters/mqtt-request.js';
import type { PluginRequest } from '../../src/protocol/types.js';

const base: PluginRequest = {
  request_id: '6f1c0d2e-8b9a-4c3d-9e8f-0a1b2c3d4e5f',
  plugin_id: 'desk-lamp',
  capability_id: 'switch',
  parameters: { on: true },
  deadline: 1_790_000_000_000,
};

const full: PluginRequest = {
  ...base,
  user_id: 'alice',
  user_name: 'Alice',
  channel_name: 'kitchen',
  session_id: '3b2f6a4c-1d5e-4f7a-8b9c-0d1e2f3a4b5c',
  user_input: 'could you please switch on the lamp on my desk, the one next to the window',
  chat_context: 'user: hello\nassistant: hi, how can I help?\n'.repeat(5),
  metadata: { locale: 'en-GB', device: 'kitchen tablet' },
};

describe('the MQTT invoke payload', () => {
  it('leaves out the long context unless the capability wants it: a short request fits a 256-byte packet', () => {
    const payload = mqttRequestPayload(full, {});
    expect(JSON.parse(payload)).toEqual({ ...base, user_id: 'alice', channel_name: 'kitchen' });
    const topic = 'homeclaw/plugins/invoke/desk-lamp';
    // PUBLISH: fixed header (2) + topic length (2) + topic + packet id (2) + payload.
    expect(2 + 2 + topic.length + 2 + Buffer.byteLength(payload)).toBeLessThanOrEqual(256);
  });

  it('sends the whole request to a capability with wants_context: true', () => {
    expect(JSON.parse(mqttRequestPayload(full, { wants_context: true }))).toEqual(full);
  });

  it('never sends empty fields, even to a capability that wants the context', () => {
    const sparse = { ...base, user_id: '', user_input: '', metadata: {}, chat_context: '', parameters: {} } as PluginRequest;
    expect(JSON.parse(mqttRequestPayload(sparse, { wants_context: true }))).toEqual({ ...base, parameters: {} });
  });

  it('treats any field beyond the short set as context (fields added to requests later included)', () => {
    const extended = { ...base, channel_type: 'telegram', app_id: 'homeclaw' } as unknown as PluginRequest;
    expect(JSON.parse(mqttRequestPayload(extended, {}))).toEqual(base);
    expect(JSON.parse(mqttRequestPayload(extended, { wants_context: true }))).toEqual(extended);
  });

  it('sends a request with nothing to leave out exactly as built', () => {
    expect(mqttRequestPayload(base, {})).toBe(JSON.stringify(base));
  });
});
