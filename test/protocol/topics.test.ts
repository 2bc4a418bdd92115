// Keeps src/protocol/topics.ts and topics/asyncapi.yaml in step, and keeps topics out of other code.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { findPackageRoot } from '../../src/kit/package-root.js';
import {
  filters,
  haFilters,
  isCommandTopic,
  parseTopic,
  parseZigbee2mqttTopic,
  topicMatches,
  topics,
  zigbee2mqttFilters,
  zigbee2mqttTopics,
  type EventKind,
  type Zigbee2mqttTopicKind,
} from '../../src/protocol/topics.js';

const root = findPackageRoot(import.meta.url);
const asyncApiPath = join(root, 'topics', 'asyncapi.yaml');
const doc = parseYaml(readFileSync(asyncApiPath, 'utf8')) as Record<string, any>;
const channels = doc['channels'] as Record<string, { address: string; parameters?: Record<string, unknown>; messages: Record<string, unknown> }>;

/** Sample arguments for every topic builder; a builder without one fails the test below. */
const samples: Record<keyof typeof topics, () => string> = {
  coreStatus: () => topics.coreStatus(),
  register: () => topics.register(),
  registered: () => topics.registered('weather'),
  registeredInvalid: () => topics.registeredInvalid(),
  unregister: () => topics.unregister(),
  status: () => topics.status('weather'),
  heartbeat: () => topics.heartbeat('weather'),
  invoke: () => topics.invoke('slack-bot'),
  result: () => topics.result('3f2c9a1e-5b7d-4c2e'),
  control: () => topics.control('weather'),
  notify: () => topics.notify('reminders'),
  notified: () => topics.notified('reminders'),
  channelIn: () => topics.channelIn('cli'),
  channelOut: () => topics.channelOut('telegram'),
  events: () => topics.events('registry'),
  call: () => topics.call('weather', 'forecast'),
  callResult: () => topics.callResult('3f2c9a1e-5b7d-4c2e'),
  callResultInvalid: () => topics.callResultInvalid(),
  haCoreState: () => topics.haCoreState(),
  haPluginState: () => topics.haPluginState('weather'),
  haPress: () => topics.haPress('weather', 'forecast'),
  haDiscovery: () => topics.haDiscovery('homeassistant', 'homeclaw_weather'),
  haStatus: () => topics.haStatus('homeassistant'),
};
const eventKinds: EventKind[] = ['registry', 'invocation'];

/** Zigbee2MQTT topic builders: a sample topic each, and the kind parseZigbee2mqttTopic must give it. */
const Z2M_BASE = 'zigbee2mqtt';
const Z2M_NAME = 'hallway_sensor';
const z2mSamples: Record<keyof typeof zigbee2mqttTopics, { topic: () => string; kind: Zigbee2mqttTopicKind }> = {
  bridgeDevices: { topic: () => zigbee2mqttTopics.bridgeDevices(Z2M_BASE), kind: 'bridge/devices' },
  bridgeEvent: { topic: () => zigbee2mqttTopics.bridgeEvent(Z2M_BASE), kind: 'bridge/event' },
  bridgeState: { topic: () => zigbee2mqttTopics.bridgeState(Z2M_BASE), kind: 'bridge/state' },
  deviceState: { topic: () => zigbee2mqttTopics.deviceState(Z2M_BASE, Z2M_NAME), kind: 'state' },
  availability: { topic: () => zigbee2mqttTopics.availability(Z2M_BASE, Z2M_NAME), kind: 'availability' },
  set: { topic: () => zigbee2mqttTopics.set(Z2M_BASE, Z2M_NAME), kind: 'set' },
  get: { topic: () => zigbee2mqttTopics.get(Z2M_BASE, Z2M_NAME), kind: 'get' },
};

function addressRegex(address: string): RegExp {
  const escaped = address.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/\{[a-z_]+\}/g, '[^/+#]+')}$`);
}

/**
 * The channels a concrete topic belongs to; a literal address beats a template (registered/_invalid),
 * and among templates the most literal one wins ({discovery_prefix}/status over Zigbee2MQTT's
 * {base_topic}/{friendly_name}, which matches any two levels).
 */
function channelsFor(topic: string): string[] {
  const literal = Object.entries(channels)
    .filter(([, c]) => c.address === topic)
    .map(([id]) => id);
  if (literal.length > 0) return literal;
  const matching = Object.entries(channels).filter(([, c]) => addressRegex(c.address).test(topic));
  const literalLength = (address: string): number => address.replace(/\{[a-z_]+\}/g, '').length;
  const best = Math.max(...matching.map(([, c]) => literalLength(c.address)));
  return matching.filter(([, c]) => literalLength(c.address) === best).map(([id]) => id);
}

/**
 * A subscription filter covers a channel when it is the address with every {param} replaced by '+'
 * ({discovery_prefix} by Home Assistant's default prefix: it is configured, never a wildcard).
 */
function channelsForFilter(filter: string): string[] {
  return Object.entries(channels)
    .filter(([, c]) => c.address.replace('{discovery_prefix}', 'homeassistant').replace(/\{[a-z_]+\}/g, '+') === filter)
    .map(([id]) => id);
}

describe('topics.ts against asyncapi.yaml', () => {
  it('has sample arguments for every topic builder', () => {
    expect(Object.keys(samples).sort()).toEqual(Object.keys(topics).sort());
  });

  it('has sample arguments for every Zigbee2MQTT topic builder', () => {
    expect(Object.keys(z2mSamples).sort()).toEqual(Object.keys(zigbee2mqttTopics).sort());
  });

  it('every built topic and every filter matches exactly one channel, and every channel is used', () => {
    const used = new Set<string>();
    for (const [builder, sample] of Object.entries(z2mSamples)) {
      const topic = sample.topic();
      const matched = channelsFor(topic);
      expect(matched, `${builder}: ${topic}`).toHaveLength(1);
      for (const id of matched) used.add(id);
      expect(
        parseZigbee2mqttTopic(Z2M_BASE, topic, (name) => name === Z2M_NAME),
        topic,
      ).toEqual({
        kind: sample.kind,
        ...(sample.kind.startsWith('bridge/') ? {} : { friendly_name: Z2M_NAME }),
      });
      // The Core's one Zigbee2MQTT subscription covers every topic it reads, and no HomeClaw filter does.
      if (!['set', 'get'].includes(sample.kind)) expect(topicMatches(zigbee2mqttFilters.all(Z2M_BASE), topic), topic).toBe(true);
      for (const filter of Object.values(filters)) expect(topicMatches(filter, topic), `${filter} ${topic}`).toBe(false);
    }
    const built = [...Object.values(samples).map((build) => build()), ...eventKinds.map((kind) => topics.events(kind))];
    for (const topic of built) {
      const matched = channelsFor(topic);
      expect(matched, `topic ${topic}`).toHaveLength(1);
      for (const id of matched) used.add(id);
      // The parser of topics.ts recognises every topic the document describes.
      expect(parseTopic(topic), topic).not.toBeNull();
    }
    for (const filter of [...Object.values(filters), haFilters.discovery('homeassistant')]) {
      const matched = channelsForFilter(filter);
      expect(matched, `filter ${filter}`).toHaveLength(1);
      for (const id of matched) used.add(id);
    }
    expect([...used].sort()).toEqual(Object.keys(channels).sort());
  });

  it('declares every address parameter and only those', () => {
    for (const [id, channel] of Object.entries(channels)) {
      const inAddress = [...channel.address.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]).sort();
      expect(Object.keys(channel.parameters ?? {}).sort(), id).toEqual(inAddress);
    }
    expect(doc['components']['parameters']['event_kind']['enum']).toEqual(eventKinds);
  });
});

describe('parseZigbee2mqttTopic', () => {
  const known = new Set(['hallway/leak sensor', 'kitchen', 'kitchen/light', 'bridge/lamp']);
  const isKnown = (name: string): boolean => known.has(name);

  it.each([
    ['zigbee2mqtt/hallway/leak sensor', { kind: 'state', friendly_name: 'hallway/leak sensor' }],
    ['zigbee2mqtt/hallway/leak sensor/availability', { kind: 'availability', friendly_name: 'hallway/leak sensor' }],
    ['zigbee2mqtt/kitchen/light', { kind: 'state', friendly_name: 'kitchen/light' }],
    ['zigbee2mqtt/kitchen/set', { kind: 'set', friendly_name: 'kitchen' }],
    ['zigbee2mqtt/kitchen/light/get', { kind: 'get', friendly_name: 'kitchen/light' }],
    ['zigbee2mqtt/not yet listed/availability', { kind: 'availability', friendly_name: 'not yet listed' }],
    ['zigbee2mqtt/bridge/devices', { kind: 'bridge/devices' }],
    ['zigbee2mqtt/bridge/info', null],
    ['zigbee2mqtt/bridge/lamp', { kind: 'state', friendly_name: 'bridge/lamp' }],
    ['zigbee2mqtt/bridge/lamp/availability', { kind: 'availability', friendly_name: 'bridge/lamp' }],
    ['zigbee2mqtt/bridge/request/device/set', null],
    ['zigbee2mqtt/bridge/response/device/rename', null],
    ['zigbee2mqtt/unknown device', null],
    ['zigbee2mqtt/availability', null],
    ['zigbee2mqttx/kitchen', null],
    ['homeclaw/plugins/register', null],
  ] as const)('%s', (topic, expected) => {
    expect(parseZigbee2mqttTopic('zigbee2mqtt', topic, isKnown)).toEqual(expected);
  });

  it('works under a base topic with several levels', () => {
    expect(parseZigbee2mqttTopic('home/zigbee', 'home/zigbee/kitchen/light/availability', isKnown)).toEqual({
      kind: 'availability',
      friendly_name: 'kitchen/light',
    });
    expect(parseZigbee2mqttTopic('home/zigbee', 'home/zigbee/bridge/devices', isKnown)).toEqual({ kind: 'bridge/devices' });
    expect(parseZigbee2mqttTopic('home/zigbee', 'home/kitchen', isKnown)).toBeNull();
  });
});

describe('asyncapi.yaml shape', () => {
  function resolveLocal(ref: string): unknown {
    expect(ref.startsWith('#/'), ref).toBe(true);
    return ref
      .slice(2)
      .split('/')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], doc);
  }

  it('is AsyncAPI 3.0.0 with info, channels and operations', () => {
    expect(doc['asyncapi']).toBe('3.0.0');
    expect(doc['info']).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    expect(Object.keys(channels).length).toBeGreaterThan(0);
    expect(Object.keys(doc['operations']).length).toBeGreaterThan(0);
  });

  it('every operation has a valid action and $refs that resolve, to messages of its own channel', () => {
    const usedChannels = new Set<string>();
    for (const [id, op] of Object.entries(doc['operations'] as Record<string, any>)) {
      expect(['send', 'receive'], id).toContain(op.action);
      const channel = resolveLocal(op.channel.$ref) as { address?: string } | undefined;
      expect(channel?.address, `${id} channel`).toBeTypeOf('string');
      usedChannels.add(op.channel.$ref);
      expect(op.messages.length, id).toBeGreaterThan(0);
      for (const message of op.messages) {
        expect(message.$ref.startsWith(`${op.channel.$ref}/messages/`), `${id} message ${message.$ref}`).toBe(true);
        expect(resolveLocal(message.$ref), message.$ref).toBeDefined();
      }
      if (op.reply) {
        expect(resolveLocal(op.reply.channel.$ref)).toBeDefined();
        for (const message of op.reply.messages) expect(resolveLocal(message.$ref)).toBeDefined();
      }
      const qos = op.bindings?.mqtt?.qos;
      expect([0, 1, 2], `${id} qos`).toContain(qos);
    }
    // Every channel is the subject of at least one operation.
    expect([...usedChannels].sort()).toEqual(
      Object.keys(channels)
        .map((id) => `#/channels/${id}`)
        .sort(),
    );
  });

  it('every channel message resolves to a component whose payload $ref is an existing schema file', () => {
    const schemaDir = join(root, 'topics', 'schemas');
    const referenced = new Set<string>();
    for (const [id, channel] of Object.entries(channels)) {
      for (const [name, message] of Object.entries(channel.messages)) {
        const component = resolveLocal((message as { $ref: string }).$ref) as { payload?: { $ref?: string } } | undefined;
        const payloadRef = component?.payload?.$ref;
        expect(payloadRef, `${id}/${name}`).toMatch(/^\.\/schemas\/[a-z0-9-]+\.schema\.json$/);
        const file = resolve(dirname(asyncApiPath), payloadRef as string);
        expect(existsSync(file), file).toBe(true);
        referenced.add(file);
      }
    }
    // Every schema file is described by the document, either directly or as a shared/definition file.
    const files = readdirSync(schemaDir).map((f) => join(schemaDir, f));
    const unreferenced = files.filter((f) => !referenced.has(f)).map((f) => relative(schemaDir, f));
    expect(unreferenced.sort()).toEqual(['common.schema.json', 'descriptor.schema.json']);
    expect(doc['components']['messages']['Descriptor']['payload']['$ref']).toBe('./schemas/descriptor.schema.json');
  });
});

/** String literal texts ('...', "...", `...`) of a TypeScript source, comments skipped. */
function stringLiterals(source: string): string[] {
  const found: string[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i] as string;
    const next = source[i + 1];
    if (ch === '/' && next === '/') {
      i = source.indexOf('\n', i);
      if (i < 0) break;
      continue;
    }
    if (ch === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      i = end < 0 ? source.length : end + 2;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === '`') {
      let j = i + 1;
      let text = '';
      while (j < source.length && source[j] !== ch) {
        if (source[j] === '\\') {
          text += source[j + 1] ?? '';
          j += 2;
          continue;
        }
        if (ch !== '`' && source[j] === '\n') break;
        text += source[j];
        j += 1;
      }
      found.push(text);
      i = j + 1;
      continue;
    }
    i += 1;
  }
  return found;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

describe('no topic strings outside src/protocol/topics.ts', () => {
  it('the literal scanner finds literals and skips comments', () => {
    expect(stringLiterals(`// 'homeclaw/in comment'\nconst a = "homeclaw/x"; /* "no" */ const b = \`t\${1}\`; const c = 'it\\'s';`)).toEqual([
      'homeclaw/x',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the template literal the scanner read, as text.
      't${1}',
      "it's",
    ]);
  });

  it('no file under src/ other than topics.ts has a string literal containing "homeclaw/"', () => {
    const srcDir = join(root, 'src');
    const offenders: string[] = [];
    for (const file of tsFiles(srcDir)) {
      if (file === join(srcDir, 'protocol', 'topics.ts')) continue;
      for (const literal of stringLiterals(readFileSync(file, 'utf8'))) {
        if (literal.includes('homeclaw/')) offenders.push(`${relative(root, file)}: ${JSON.stringify(literal)}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});

describe('topicMatches', () => {
  it.each([
    ['a/b', 'a/b', true],
    ['a/+', 'a/b', true],
    ['a/+', 'a/b/c', false],
    ['a/#', 'a/b/c', true],
    ['a/#', 'a', true],
    ['#', 'a/b', true],
    ['+', 'a/b', false],
    ['a/b', 'a/bc', false],
    ['a/bc', 'a/b', false],
    ['a/+/c', 'a//c', true],
    ['a/b/c', 'a/b', false],
    ['a/b', 'a/b/c', false],
    ['a/+/#', 'a', false],
    ['homeclaw/plugins/result/+', 'homeclaw/plugins/results/123', false],
  ] as const)('%s against %s is %s', (filter, topic, expected) => {
    expect(topicMatches(filter, topic)).toBe(expected);
  });
});

describe('isCommandTopic', () => {
  it('names the topics whose messages ask for an action, and no others', () => {
    const commands = [
      topics.register(),
      topics.unregister(),
      topics.heartbeat('a'),
      topics.result('r1'),
      topics.channelIn('web'),
      topics.invoke('a'),
      topics.control('a'),
      topics.notify('a'),
      `${topics.coreStatus().split('/')[0]}/call/a/b`,
    ];
    const others = [
      topics.coreStatus(),
      topics.status('a'),
      topics.registered('a'),
      topics.registeredInvalid(),
      topics.notified('a'),
      topics.channelOut('web'),
      topics.events('registry'),
      'other/plugins/register',
    ];
    for (const topic of commands) expect(isCommandTopic(topic), topic).toBe(true);
    for (const topic of others) expect(isCommandTopic(topic), topic).toBe(false);
  });
});
