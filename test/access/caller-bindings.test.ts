// Who a call on the MQTT front door acts for: the caller's binding decides, never the payload alone.
import { describe, expect, it } from 'vitest';
import { CallerBindings } from '../../src/access/caller-bindings.js';
import { loadConfig } from '../../src/config/load.js';

const embedded = (configured: string[] | null = null) => new CallerBindings({ embedded: true, configured });
const external = (configured: string[] | null = null) => new CallerBindings({ embedded: false, configured });
const caller = (username: string, users?: string[]) => ({ clientId: `${username}-1`, username, role: 'caller', ...(users ? { users } : {}) });

describe('embedded broker', () => {
  it('a caller login acts as its users (default: the user named like the login)', () => {
    const bindings = embedded();
    expect(bindings.decide({ publisher: caller('nodered') })).toEqual({ allowed: true, user_id: 'nodered' });
    expect(bindings.decide({ user_id: 'nodered', publisher: caller('nodered') })).toEqual({ allowed: true, user_id: 'nodered' });
    expect(bindings.decide({ user_id: 'alice', publisher: caller('nodered') })).toEqual({
      allowed: false,
      reason:
        'the caller login "nodered" may act only as "nodered", not as "alice"; bind users when creating the login: homeclaw credentials add nodered --role caller --users ...',
    });
    expect(bindings.decide({ publisher: caller('kids', ['kid']) })).toEqual({ allowed: true, user_id: 'kid' });
  });

  it('several users: one must be named; "*": anyone, and no user_id means no user', () => {
    const bindings = embedded();
    const family = caller('family', ['alice', 'bob']);
    expect(bindings.decide({ user_id: 'bob', publisher: family })).toEqual({ allowed: true, user_id: 'bob' });
    expect(bindings.decide({ publisher: family }).allowed).toBe(false);
    const open = caller('automations', ['*']);
    expect(bindings.decide({ user_id: 'carol', publisher: open })).toEqual({ allowed: true, user_id: 'carol' });
    expect(bindings.decide({ publisher: open })).toEqual({ allowed: true });
  });

  it('an admin login may act as anyone; plugin and channel logins may not call', () => {
    const bindings = embedded(['household']);
    expect(bindings.decide({ user_id: 'bob', publisher: { clientId: 'a', username: 'root', role: 'admin' } })).toEqual({ allowed: true, user_id: 'bob' });
    expect(bindings.decide({ publisher: { clientId: 'p', username: 'weather', role: 'plugin' } })).toEqual({
      allowed: false,
      reason: 'a plugin login may not call plugins',
    });
  });

  it('anonymous callers (loopback mode) act as anyone unless access.callers.users binds them', () => {
    const anonymous = { clientId: 'anon-1' };
    expect(embedded().decide({ user_id: 'alice', publisher: anonymous })).toEqual({ allowed: true, user_id: 'alice' });
    expect(embedded().decide({ publisher: anonymous })).toEqual({ allowed: true });
    expect(embedded(['household']).decide({ publisher: anonymous })).toEqual({ allowed: true, user_id: 'household' });
    expect(embedded(['household']).decide({ user_id: 'alice', publisher: anonymous }).allowed).toBe(false);
  });
});

describe('external broker (publishers unknown)', () => {
  it('every caller acts as "household" unless access.callers.users says otherwise', () => {
    expect(external().decide({})).toEqual({ allowed: true, user_id: 'household' });
    expect(external().decide({ user_id: 'alice' })).toEqual({
      allowed: false,
      reason: 'callers on the external broker may act only as "household", not as "alice"; bind users in access.callers.users',
    });
    expect(external(['alice', 'bob']).decide({ user_id: 'alice' })).toEqual({ allowed: true, user_id: 'alice' });
    expect(external(['*']).decide({})).toEqual({ allowed: true });
    expect(external().externalUsers()).toEqual(['household']);
  });

  it('access.callers.users is read from the config and checked', () => {
    const set = loadConfig({ env: {}, overrides: { access: { callers: { users: ['alice', '*'] } } } });
    expect(set.ok && set.config.access.callers.users).toEqual(['alice', '*']);
    const unset = loadConfig({ env: {} });
    expect(unset.ok && unset.config.access.callers.users).toBeNull();
    expect(loadConfig({ env: {}, overrides: { access: { callers: { users: [] } } } }).ok).toBe(false);
    expect(loadConfig({ env: {}, overrides: { access: { callers: { users: ['bad user'] } } } }).ok).toBe(false);
  });
});
