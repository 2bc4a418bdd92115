import { describe, expect, it } from 'vitest';
import { withCallerIdentity } from '../../src/dispatch/caller-identity.js';
import type { ParameterSpec } from '../../src/protocol/types.js';

const capability = {
  parameters: [
    { name: 'who', type: 'string', system_key: 'user_id' },
    { name: 'where', type: 'string', system_key: 'channel' },
    { name: 'tz', type: 'string', system_key: 'timezone' },
    { name: 'text', type: 'string' },
  ] as ParameterSpec[],
};

describe('withCallerIdentity', () => {
  it('sets the user and channel parameters from a call made for a user, over what the caller sent', () => {
    const sent = { who: 'bob', where: 'kitchen', tz: 'UTC', text: 'hi' };
    expect(withCallerIdentity(capability, sent, { user_id: 'alice', channel_name: 'mcp' })).toEqual({ who: 'alice', where: 'mcp', tz: 'UTC', text: 'hi' });
    expect(sent.who).toBe('bob'); // the caller's object is not changed
  });

  it('fills them when the caller sent none, and leaves a channel the context does not know', () => {
    expect(withCallerIdentity(capability, { text: 'hi' }, { user_id: 'alice' })).toEqual({ who: 'alice', text: 'hi' });
  });

  it('leaves a call made for no user as the caller wrote it, and returns the same object when nothing changes', () => {
    const sent = { who: 'bob', text: 'hi' };
    expect(withCallerIdentity(capability, sent, { channel_name: 'http' })).toBe(sent);
    expect(withCallerIdentity(capability, sent, undefined)).toBe(sent);
    const already = { who: 'alice', where: 'mcp' };
    expect(withCallerIdentity(capability, already, { user_id: 'alice', channel_name: 'mcp' })).toBe(already);
  });
});
