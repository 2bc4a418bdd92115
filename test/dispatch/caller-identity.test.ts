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
  it("sets the user parameter from a call made for a user, over what the caller sent; the channel stays the caller's", () => {
    const sent = { who: 'bob', where: 'kitchen', tz: 'UTC', text: 'hi' };
    expect(withCallerIdentity(capability, sent, { user_id: 'alice', channel_name: 'mcp' })).toEqual({ who: 'alice', where: 'kitchen', tz: 'UTC', text: 'hi' });
    expect(sent.who).toBe('bob'); // the caller's object is not changed
  });

  it('fills it when the caller sent none', () => {
    expect(withCallerIdentity(capability, { text: 'hi' }, { user_id: 'alice' })).toEqual({ who: 'alice', text: 'hi' });
  });

  it('leaves a call made for no user as the caller wrote it, and returns the same object when nothing changes', () => {
    const sent = { who: 'bob', text: 'hi' };
    expect(withCallerIdentity(capability, sent, { channel_name: 'http' })).toBe(sent);
    expect(withCallerIdentity(capability, sent, undefined)).toBe(sent);
    const already = { who: 'alice', where: 'kitchen' };
    expect(withCallerIdentity(capability, already, { user_id: 'alice', channel_name: 'mcp' })).toBe(already);
  });
});
