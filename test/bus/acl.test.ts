import { describe, expect, it } from 'vitest';
import { anonymousAllowed, authorizePublishTopic, authorizeSubscribeFilter, isLoopbackHost, type AclContext, type ClientIdentity } from '../../src/bus/acl.js';
import { filters, topics } from '../../src/protocol/topics.js';

const plugin: ClientIdentity = { clientId: 'c1', username: 'weather', role: 'plugin', pluginIds: ['weather'], channels: ['weather'] };
const channel: ClientIdentity = { clientId: 'c2', username: 'telegram', role: 'channel', pluginIds: ['telegram'], channels: ['telegram'] };
const admin: ClientIdentity = { clientId: 'c3', username: 'root', role: 'admin', pluginIds: ['root'], channels: ['root'] };
const anonymous: ClientIdentity = { clientId: 'c4', pluginIds: [], channels: [] };

const pending: Record<string, string> = { 'req-weather': 'weather', 'req-other': 'other' };
const context: AclContext = {
  requestTarget: (id) => pending[id],
  ownsPluginId: (username, id) => username === 'weather' && id === 'weather-extra',
};

type Row = [label: string, who: ClientIdentity, topic: string, allowed: boolean];

const publishTable: Row[] = [
  ['plugin registers', plugin, topics.register(), true],
  ['plugin unregisters', plugin, topics.unregister(), true],
  ['plugin heartbeat own', plugin, topics.heartbeat('weather'), true],
  ['plugin heartbeat own (registry-owned id)', plugin, topics.heartbeat('weather-extra'), true],
  ['plugin heartbeat other', plugin, topics.heartbeat('other'), false],
  ['plugin status own (its will)', plugin, topics.status('weather'), true],
  ['plugin status other', plugin, topics.status('other'), false],
  ['plugin notify own', plugin, topics.notify('weather'), true],
  ['plugin notify other', plugin, topics.notify('other'), false],
  ['plugin notified ack (the Core answers)', plugin, topics.notified('weather'), false],
  ['channel notify', channel, topics.notify('telegram'), false],
  ['plugin result for its request', plugin, topics.result('req-weather'), true],
  ['plugin result for another plugin request', plugin, topics.result('req-other'), false],
  ['plugin result for unknown request', plugin, topics.result('req-unknown'), false],
  ['plugin invoke', plugin, topics.invoke('weather'), false],
  ['plugin control', plugin, topics.control('weather'), false],
  ['plugin registered ack', plugin, topics.registered('weather'), false],
  ['plugin core status', plugin, topics.coreStatus(), false],
  ['plugin channel in', plugin, topics.channelIn('weather'), false],
  ['plugin outside the tree', plugin, 'elsewhere/x', false],
  ['plugin $SYS', plugin, '$SYS/x', false],
  ['channel in own', channel, topics.channelIn('telegram'), true],
  ['channel in other', channel, topics.channelIn('web'), false],
  ['channel out own', channel, topics.channelOut('telegram'), false],
  ['channel register', channel, topics.register(), false],
  ['channel heartbeat', channel, topics.heartbeat('telegram'), false],
  ['channel result', channel, topics.result('req-weather'), false],
  ['admin core status', admin, topics.coreStatus(), true],
  ['admin invoke', admin, topics.invoke('weather'), true],
  ['admin anything', admin, 'elsewhere/x', true],
  ['admin $SYS', admin, '$SYS/x', false],
  ['anonymous register', anonymous, topics.register(), true],
  ['anonymous result', anonymous, topics.result('req-other'), true],
  ['anonymous core status', anonymous, topics.coreStatus(), false],
  ['anonymous $SYS', anonymous, '$SYS/x', false],
];

const subscribeTable: Row[] = [
  ['plugin invoke own', plugin, topics.invoke('weather'), true],
  ['plugin notified own', plugin, topics.notified('weather'), true],
  ['plugin notified other', plugin, topics.notified('other'), false],
  ['plugin control own', plugin, topics.control('weather'), true],
  ['plugin registered own', plugin, topics.registered('weather'), true],
  ['plugin registered _invalid', plugin, topics.registeredInvalid(), true],
  ['plugin core status', plugin, topics.coreStatus(), true],
  ['plugin invoke registry-owned id', plugin, topics.invoke('weather-extra'), true],
  ['plugin invoke other', plugin, topics.invoke('other'), false],
  ['plugin invoke wildcard +', plugin, topics.invoke('+'), false],
  ['plugin everything #', plugin, '#', false],
  ['plugin results', plugin, filters.result, false],
  ['plugin heartbeats', plugin, filters.heartbeat, false],
  ['plugin channel out', plugin, topics.channelOut('weather'), false],
  ['channel out own', channel, topics.channelOut('telegram'), true],
  ['channel core status', channel, topics.coreStatus(), true],
  ['channel out other', channel, topics.channelOut('web'), false],
  ['channel out wildcard', channel, topics.channelOut('+'), false],
  ['channel in own', channel, topics.channelIn('telegram'), false],
  ['channel invoke', channel, topics.invoke('telegram'), false],
  ['admin #', admin, '#', true],
  ['anonymous #', anonymous, '#', true],
];

describe('embedded ACL', () => {
  it.each(publishTable)('publish: %s', (_label, who, topic, allowed) => {
    const decision = authorizePublishTopic(who, topic, context);
    expect(decision.allowed).toBe(allowed);
    if (!decision.allowed) expect(decision.reason.length).toBeGreaterThan(0);
  });

  it.each(subscribeTable)('subscribe: %s', (_label, who, filter, allowed) => {
    expect(authorizeSubscribeFilter(who, filter, context).allowed).toBe(allowed);
  });

  it('refuses every plugin result when no dispatcher is wired', () => {
    expect(authorizePublishTopic(plugin, topics.result('req-weather'), {}).allowed).toBe(false);
  });
});

describe('anonymous clients', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['192.168.1.10', false],
  ])('%s is loopback: %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });

  it.each([
    ['auto', ['127.0.0.1'], true],
    ['auto', ['127.0.0.1', '::1'], true],
    ['auto', ['127.0.0.1', '0.0.0.0'], false],
    ['auto', ['0.0.0.0'], false],
    [true, ['0.0.0.0'], true],
    [false, ['127.0.0.1'], false],
  ] as const)('setting %s with listeners %j → %s', (setting, hosts, expected) => {
    expect(anonymousAllowed(setting, hosts)).toBe(expected);
  });
});
