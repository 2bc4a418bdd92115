// The per-user policy: allow/deny patterns, deny wins, the default for users without an entry, and which
// capabilities need confirmation. Pure rules, so every combination is checked directly.
import { describe, expect, it } from 'vitest';
import { AccessPolicy } from '../../src/access/policy.js';
import { compileGlob, isPolicyPattern } from '../../src/access/policy-globs.js';
import type { CapabilitySpec } from '../../src/protocol/types.js';

const cap = (id: string, extra: Partial<CapabilitySpec> = {}): CapabilitySpec => ({
  id,
  name: id,
  description: id,
  parameters: [],
  post_process: false,
  ...extra,
});
const plugin = (id: string, ...capabilities: string[]) => ({ descriptor: { id, capabilities: capabilities.map((c) => cap(c)) } });

describe('policy patterns', () => {
  it('match a plugin, one capability, or * inside either part, never across the dot', () => {
    expect(compileGlob('lock').matches('lock', 'unlock')).toBe(true);
    expect(compileGlob('lock').matches('locker', 'unlock')).toBe(false);
    expect(compileGlob('lock.unlock').matches('lock', 'unlock')).toBe(true);
    expect(compileGlob('lock.unlock').matches('lock', 'status')).toBe(false);
    expect(compileGlob('lock.*').matches('lock', 'status')).toBe(true);
    expect(compileGlob('*.delete_*').matches('notes', 'delete_all')).toBe(true);
    expect(compileGlob('*.delete_*').matches('notes', 'list')).toBe(false);
    expect(compileGlob('home-*').matches('home-lights', 'on')).toBe(true);
    expect(compileGlob('home-*').matches('homelights', 'on')).toBe(false);
    expect(compileGlob('*').matches('anything', 'at_all')).toBe(true);
    expect(compileGlob('lock.Unlock').matches('lock', 'unlock')).toBe(false);
  });

  it('refuses what is not a pattern, with an example in the message', () => {
    for (const bad of ['', 'Lock', 'lock.', '.unlock', 'a.b.c', 'lock unlock', 'lock/unlock', 'x'.repeat(65)]) {
      expect(isPolicyPattern(bad), bad).toBe(false);
      expect(() => compileGlob(bad)).toThrow(/plugin\.capability.*lock\.unlock/);
    }
  });
});

describe('AccessPolicy.decide', () => {
  const policy = new AccessPolicy({
    default: { allow: ['time', 'weather'] },
    users: {
      kid: { deny: ['lock', 'buy'] },
      teen: { allow: ['lock', 'time'], deny: ['lock.unlock'] },
      locked: { allow: [] },
      admin_like: {},
    },
    require_confirmation: ['garage.open', '*.delete_*'],
  });

  it('deny only: everything but the denied', () => {
    expect(policy.decide('kid', 'time', 'now')).toEqual({ allowed: true });
    expect(policy.decide('kid', 'lock', 'status')).toEqual({
      allowed: false,
      reason: 'user "kid" is not allowed to use lock.status (policy.users.kid.deny: lock)',
    });
  });

  it('allow and deny: deny wins', () => {
    expect(policy.decide('teen', 'lock', 'status').allowed).toBe(true);
    expect(policy.decide('teen', 'lock', 'unlock')).toEqual({
      allowed: false,
      reason: 'user "teen" is not allowed to use lock.unlock (policy.users.teen.deny: lock.unlock)',
    });
    expect(policy.decide('teen', 'buy', 'place_order')).toEqual({
      allowed: false,
      reason: 'user "teen" is not allowed to use buy.place_order (not in policy.users.teen.allow)',
    });
  });

  it('allow: [] reaches nothing; an empty entry reaches everything (and replaces the default)', () => {
    expect(policy.decide('locked', 'time', 'now').allowed).toBe(false);
    expect(policy.decide('admin_like', 'lock', 'unlock').allowed).toBe(true);
  });

  it('users without an entry get policy.default; calls without a user are not restricted', () => {
    expect(policy.decide('guest', 'weather', 'forecast').allowed).toBe(true);
    expect(policy.decide('guest', 'lock', 'status')).toEqual({
      allowed: false,
      reason: 'user "guest" is not allowed to use lock.status (not in policy.default.allow)',
    });
    expect(policy.decide(undefined, 'lock', 'unlock').allowed).toBe(true);
  });

  it('without any policy everyone reaches everything', () => {
    const open = new AccessPolicy();
    expect(open.decide('anyone', 'lock', 'unlock').allowed).toBe(true);
    expect(open.summary()).toEqual({ users: [], has_default: false, require_confirmation: [] });
  });

  it('mayReachPlugin: at least one capability allowed', () => {
    expect(policy.mayReachPlugin('teen', plugin('lock', 'unlock', 'status'))).toBe(true);
    expect(policy.mayReachPlugin('teen', plugin('lock', 'unlock'))).toBe(false);
    expect(policy.mayReachPlugin('kid', plugin('lock', 'unlock', 'status'))).toBe(false);
  });
});

describe('confirmation', () => {
  const policy = new AccessPolicy({ users: { kid: { deny: ['lock'] } }, require_confirmation: ['garage.open', '*.delete_*'] });

  it('comes from the descriptor flag or policy.require_confirmation', () => {
    expect(policy.requiresConfirmation('lock', cap('unlock', { requires_confirmation: true }))).toBe(true);
    expect(policy.requiresConfirmation('garage', cap('open'))).toBe(true);
    expect(policy.requiresConfirmation('notes', cap('delete_all'))).toBe(true);
    expect(policy.requiresConfirmation('garage', cap('close'))).toBe(false);
  });

  it('check(): forbidden first, then confirmation_required unless confirmed', () => {
    expect(policy.check({ plugin_id: 'lock', capability: cap('unlock', { requires_confirmation: true }), user_id: 'kid', confirmed: true })).toMatchObject({
      code: 'forbidden',
    });
    expect(policy.check({ plugin_id: 'garage', capability: cap('open'), user_id: 'kid', confirmed: false })).toEqual({
      code: 'confirmation_required',
      message: 'garage.open requires confirmation: ask the user, then call again with "confirmed": true',
    });
    expect(policy.check({ plugin_id: 'garage', capability: cap('open'), confirmed: true })).toBeUndefined();
    expect(policy.check({ plugin_id: 'time', capability: cap('now'), user_id: 'kid', confirmed: false })).toBeUndefined();
  });

  it('a bad pattern in the policy is an error naming it', () => {
    expect(() => new AccessPolicy({ users: { kid: { deny: ['Lock'] } }, require_confirmation: [] })).toThrow(/"Lock"/);
  });
});
