// The request builder: every known field, nothing invented, empty values left out.
import { describe, expect, it } from 'vitest';
import { buildPluginRequest } from '../../src/dispatch/plugin-request.js';

const base = { request_id: 'r1', plugin_id: 'p', capability_id: 'c', deadline: 1000 };

describe('buildPluginRequest', () => {
  it('copies every context field and the Core app id', () => {
    const request = buildPluginRequest({
      ...base,
      parameters: { city: 'Paris' },
      app_id: 'homeclaw',
      context: {
        user_input: 'weather in Paris',
        user_id: 'alice',
        user_name: 'Alice',
        channel_name: 'telegram',
        channel_type: 'IM',
        session_id: 's1',
        chat_context: 'user: hi\nassistant: hello',
        metadata: { chat: 1 },
      },
    });
    expect(request).toEqual({
      ...base,
      parameters: { city: 'Paris' },
      user_input: 'weather in Paris',
      user_id: 'alice',
      user_name: 'Alice',
      channel_name: 'telegram',
      channel_type: 'IM',
      app_id: 'homeclaw',
      session_id: 's1',
      chat_context: 'user: hi\nassistant: hello',
      metadata: { chat: 1 },
    });
  });

  it('omits what nobody knows and what is empty; the context app id wins over the Core one', () => {
    const request = buildPluginRequest({
      ...base,
      parameters: {},
      app_id: 'homeclaw',
      context: { user_id: '', chat_context: '', metadata: {}, app_id: 'kitchen-agent' },
    });
    expect(request).toEqual({ ...base, parameters: {}, app_id: 'kitchen-agent' });
    expect(buildPluginRequest({ ...base, parameters: {}, context: {} })).toEqual({ ...base, parameters: {} });
  });

  it('lifts a user_input parameter to the top level on direct calls; the message wins when both exist', () => {
    expect(buildPluginRequest({ ...base, parameters: { user_input: 'turn it on' }, context: {} }).user_input).toBe('turn it on');
    expect(buildPluginRequest({ ...base, parameters: { user_input: 42 }, context: {} })).not.toHaveProperty('user_input');
    expect(buildPluginRequest({ ...base, parameters: { user_input: 'x' }, context: { user_input: 'the message' } }).user_input).toBe('the message');
  });
});
