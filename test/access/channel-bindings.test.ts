// Who a channel may speak for, with the embedded broker (the publisher is known) and with an external one
// (only the channel name and the configured bindings are).
import { describe, expect, it } from 'vitest';
import { ChannelBindings } from '../../src/access/channel-bindings.js';

const embedded = (configured: Record<string, { users: string[] }> = {}) => new ChannelBindings({ embedded: true, configured, credentialUsers: () => [] });
const external = (configured: Record<string, { users: string[] }> = {}, credentialUsers: Record<string, string[]> = {}) =>
  new ChannelBindings({ embedded: false, configured, credentialUsers: (channel) => credentialUsers[channel] ?? [] });

describe('embedded broker', () => {
  it('a channel credential speaks only as its users (default: itself)', () => {
    const bindings = embedded();
    const telegram = { clientId: 'c1', username: 'telegram', role: 'channel' };
    expect(bindings.authorize({ channel: 'telegram', user_id: 'telegram', publisher: telegram })).toEqual({ allowed: true });
    const refused = bindings.authorize({ channel: 'telegram', user_id: 'alice', publisher: telegram });
    expect(refused).toEqual({
      allowed: false,
      reason:
        'the channel login "telegram" may speak only as "telegram", not as "alice"; bind more users with: homeclaw credentials add telegram --role channel --users ...',
    });
    const kitchen = { ...telegram, username: 'kitchen', users: ['alice', 'bob'] };
    expect(bindings.authorize({ channel: 'kitchen', user_id: 'bob', publisher: kitchen }).allowed).toBe(true);
    expect(bindings.authorize({ channel: 'kitchen', user_id: 'mallory', publisher: kitchen }).allowed).toBe(false);
    expect(bindings.authorize({ channel: 'kitchen', user_id: 'anyone', publisher: { ...kitchen, users: ['*'] } }).allowed).toBe(true);
  });

  it('an admin speaks as anyone; a plugin login never sends user messages', () => {
    const bindings = embedded({ kitchen: { users: ['alice'] } });
    expect(bindings.authorize({ channel: 'kitchen', user_id: 'bob', publisher: { clientId: 'a', username: 'root', role: 'admin' } }).allowed).toBe(true);
    expect(bindings.authorize({ channel: 'kitchen', user_id: 'bob', publisher: { clientId: 'p', username: 'weather', role: 'plugin' } })).toEqual({
      allowed: false,
      reason: 'a plugin login may not send user messages',
    });
  });

  it('anonymous clients (loopback mode) speak as anyone unless the channel is bound in the config', () => {
    const bindings = embedded({ kitchen: { users: ['alice'] } });
    const anonymous = { clientId: 'dev' };
    expect(bindings.authorize({ channel: 'cli', user_id: 'whoever', publisher: anonymous }).allowed).toBe(true);
    expect(bindings.authorize({ channel: 'kitchen', user_id: 'alice', publisher: anonymous }).allowed).toBe(true);
    expect(bindings.authorize({ channel: 'kitchen', user_id: 'bob', publisher: anonymous })).toEqual({
      allowed: false,
      reason: 'channel "kitchen" may speak only as "alice" (access.channels.kitchen.users), not as "bob"',
    });
  });
});

describe('external broker', () => {
  it('config bindings and channel credentials add up; with neither, only the user named like the channel', () => {
    const bindings = external({ kitchen: { users: ['alice'] } }, { kitchen: ['bob'], hall: ['carol'] });
    expect(bindings.authorize({ channel: 'kitchen', user_id: 'alice' }).allowed).toBe(true);
    expect(bindings.authorize({ channel: 'kitchen', user_id: 'bob' }).allowed).toBe(true);
    expect(bindings.authorize({ channel: 'kitchen', user_id: 'carol' })).toEqual({
      allowed: false,
      reason:
        'channel "kitchen" may speak only as "alice", "bob" (access.channels.kitchen.users and credential kitchen), not as "carol"; bind users in access.channels.kitchen.users',
    });
    expect(bindings.authorize({ channel: 'hall', user_id: 'carol' }).allowed).toBe(true);
    expect(bindings.authorize({ channel: 'telegram', user_id: 'telegram' }).allowed).toBe(true);
    expect(bindings.authorize({ channel: 'telegram', user_id: 'alice' }).allowed).toBe(false);
    expect(bindings.externalBinding('telegram')).toEqual({ users: ['telegram'], source: 'the default: the user named like the channel' });
  });

  it('"*" opens a channel to every user, explicitly', () => {
    expect(external({ dev: { users: ['*'] } }).authorize({ channel: 'dev', user_id: 'anyone' }).allowed).toBe(true);
  });
});

describe('who a channel may carry messages for', () => {
  const bindings = new ChannelBindings({
    embedded: true,
    configured: { hall: { users: ['carol'] }, lobby: { users: ['*'] } },
    credentialUsers: () => [],
    boundUsers: (channel) => (channel === 'kitchen' ? ['bob', 'dana'] : []),
  });

  it("carries only its users' messages when bound by config or by channel credentials", () => {
    expect(bindings.mayCarry('kitchen', 'bob')).toEqual({ allowed: true });
    expect(bindings.mayCarry('kitchen', 'alice')).toEqual({
      allowed: false,
      reason: 'channel "kitchen" carries messages only for "bob", "dana", not for "alice"',
    });
    expect(bindings.mayCarry('hall', 'carol')).toEqual({ allowed: true });
    expect(bindings.mayCarry('hall', 'bob')).toMatchObject({ allowed: false });
  });

  it("carries anyone's on an unbound channel or one bound to *", () => {
    expect(bindings.mayCarry('web', 'alice')).toEqual({ allowed: true });
    expect(bindings.mayCarry('lobby', 'alice')).toEqual({ allowed: true });
  });
});
