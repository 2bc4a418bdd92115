// The embedded broker's rules for the front door: a caller publishes calls and reads the results of
// its own request ids; plugins and channels may not call; anonymous clients (loopback-only broker) may.
import { describe, expect, it } from 'vitest';
import { authorizePublishTopic, authorizeSubscribeFilter, type ClientIdentity } from '../../../src/bus/acl.js';
import { topics } from '../../../src/protocol/topics.js';

const caller: ClientIdentity = { clientId: 'n1', username: 'nodered', role: 'caller', pluginIds: ['nodered'], channels: ['nodered'] };
const plugin: ClientIdentity = { clientId: 'c1', username: 'weather', role: 'plugin', pluginIds: ['weather'], channels: ['weather'] };
const channel: ClientIdentity = { clientId: 'c2', username: 'telegram', role: 'channel', pluginIds: ['telegram'], channels: ['telegram'] };
const anonymous: ClientIdentity = { clientId: 'c4', pluginIds: [], channels: [] };

type Row = [label: string, who: ClientIdentity, topic: string, allowed: boolean];

const publishTable: Row[] = [
  ['caller calls a capability', caller, topics.call('weather', 'forecast'), true],
  ['caller calls an MCP-style capability id', caller, topics.call('homeassistant', 'HassTurnOn'), true],
  ['caller with a bad plugin id', caller, 'homeclaw/call/Bad!/x', false],
  ['caller publishes a result', caller, topics.callResult('r1'), false],
  ['caller publishes a plugin result', caller, topics.result('r1'), false],
  ['caller registers', caller, topics.register(), false],
  ['caller speaks on a channel', caller, topics.channelIn('nodered'), false],
  ['caller presses a button', caller, topics.haPress('time', 'now'), false],
  ['caller core status', caller, topics.coreStatus(), false],
  ['plugin calls', plugin, topics.call('weather', 'forecast'), false],
  ['channel calls', channel, topics.call('weather', 'forecast'), false],
  ['anonymous (loopback) calls', anonymous, topics.call('weather', 'forecast'), true],
];

const subscribeTable: Row[] = [
  ['caller its result', caller, topics.callResult('my-request-1'), true],
  ['caller every result (wildcard)', caller, 'homeclaw/call_result/+', false],
  ['caller everything', caller, 'homeclaw/#', false],
  ['caller invalid-call answers', caller, topics.callResultInvalid(), true],
  ['caller core status', caller, topics.coreStatus(), true],
  ['caller invocations', caller, topics.invoke('weather'), false],
  ['caller channel out', caller, topics.channelOut('nodered'), false],
  ['plugin a call result', plugin, topics.callResult('r1'), false],
  ['channel a call result', channel, topics.callResult('r1'), false],
];

describe('caller ACL', () => {
  it.each(publishTable)('publish: %s', (_label, who, topic, allowed) => {
    expect(authorizePublishTopic(who, topic, {}).allowed).toBe(allowed);
  });
  it.each(subscribeTable)('subscribe: %s', (_label, who, topic, allowed) => {
    expect(authorizeSubscribeFilter(who, topic, {}).allowed).toBe(allowed);
  });
});
