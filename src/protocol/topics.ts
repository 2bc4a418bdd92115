// The MQTT topic tree (homeclaw/...), in one place. Every topic the code publishes or subscribes is built
// here, and test/protocol/topics.test.ts checks each one against topics/asyncapi.yaml.
import type {
  CallRejection,
  CallRequest,
  ChannelMessageIn,
  ChannelMessageOut,
  ControlMessage,
  CoreStatusMessage,
  HeartbeatMessage,
  PluginNotifyAck,
  PluginNotifyMessage,
  PluginRequest,
  PluginResult,
  PluginStatusMessage,
  HaCoreState,
  HaPluginState,
  RegisterMessage,
  RegistrationAck,
  UnregisterMessage,
} from './types.js';
import type { JsonObject } from './types.js';
import type { Z2mBridgeEvent, Z2mDevice, Z2mDeviceState, Z2mGetCommand, Z2mOnlineState, Z2mSetCommand } from './zigbee2mqtt.js';

export const ROOT = 'homeclaw';
/** Home Assistant's default discovery prefix (configurable: homeassistant.discovery_prefix). */
export const HA_DEFAULT_PREFIX = 'homeassistant';

export const topics = {
  coreStatus: (): string => `${ROOT}/core/status`,
  register: (): string => `${ROOT}/plugins/register`,
  registered: (pluginId: string): string => `${ROOT}/plugins/registered/${pluginId}`,
  /** Acks for registrations whose id is missing or invalid, so no per-id topic exists. */
  registeredInvalid: (): string => `${ROOT}/plugins/registered/_invalid`,
  unregister: (): string => `${ROOT}/plugins/unregister`,
  status: (pluginId: string): string => `${ROOT}/plugins/status/${pluginId}`,
  heartbeat: (pluginId: string): string => `${ROOT}/plugins/heartbeat/${pluginId}`,
  invoke: (pluginId: string): string => `${ROOT}/plugins/invoke/${pluginId}`,
  result: (requestId: string): string => `${ROOT}/plugins/result/${requestId}`,
  control: (pluginId: string): string => `${ROOT}/plugins/control/${pluginId}`,
  /** A plugin's message for a user outside any request. */
  notify: (pluginId: string): string => `${ROOT}/plugins/notify/${pluginId}`,
  /** The Core's answer to a plugin's notify. */
  notified: (pluginId: string): string => `${ROOT}/plugins/notified/${pluginId}`,
  channelIn: (channel: string): string => `${ROOT}/channels/${channel}/in`,
  channelOut: (channel: string): string => `${ROOT}/channels/${channel}/out`,
  events: (kind: EventKind): string => `${ROOT}/events/${kind}`,
  /** The MQTT front door: a caller asks for one capability of one plugin. */
  call: (pluginId: string, capabilityId: string): string => `${ROOT}/call/${pluginId}/${capabilityId}`,
  callResult: (requestId: string): string => `${ROOT}/call_result/${requestId}`,
  /** Answers to calls whose request_id could not be read ('_invalid' is never a front-door request id). */
  callResultInvalid: (): string => `${ROOT}/call_result/_invalid`,
  /** State of the Core's Home Assistant device (retained). */
  haCoreState: (): string => `${ROOT}/ha/core/state`,
  /** State of one plugin's Home Assistant device (retained). */
  haPluginState: (pluginId: string): string => `${ROOT}/ha/plugins/${pluginId}/state`,
  /** Command topic of a plugin capability's button in Home Assistant. */
  haPress: (pluginId: string, capabilityId: string): string => `${ROOT}/ha/plugins/${pluginId}/press/${capabilityId}`,
  /** Home Assistant MQTT device discovery (retained; an empty payload removes the device). */
  haDiscovery: (prefix: string, objectId: string): string => `${prefix}/device/${objectId}/config`,
  /** Home Assistant's birth and will ("online" / "offline"). */
  haStatus: (prefix: string): string => `${prefix}/status`,
} as const;

export type EventKind = 'registry' | 'invocation';

/** Subscription filters the Core uses. */
export const filters = {
  status: `${ROOT}/plugins/status/+`,
  heartbeat: `${ROOT}/plugins/heartbeat/+`,
  result: `${ROOT}/plugins/result/+`,
  channelIn: `${ROOT}/channels/+/in`,
  register: `${ROOT}/plugins/register`,
  unregister: `${ROOT}/plugins/unregister`,
  notify: `${ROOT}/plugins/notify/+`,
  call: `${ROOT}/call/+/+`,
  haPress: `${ROOT}/ha/plugins/+/press/+`,
} as const;

/** Filters under Home Assistant's configurable discovery prefix. */
export const haFilters = {
  discovery: (prefix: string): string => `${prefix}/device/+/config`,
} as const;

const COMMAND_KINDS: ReadonlySet<TopicKind> = new Set<TopicKind>([
  'register',
  'unregister',
  'heartbeat',
  'result',
  'channel/in',
  'invoke',
  'control',
  'notify',
]);

/**
 * Commands: messages that ask for an action (register, unregister, heartbeat, a result, a user message,
 * an invocation, a control request, a plugin's message for a user, and anything under call/). A command is acted on once, when it is
 * sent; a retained copy would be replayed on every subscription, so retained commands are never
 * stored by the embedded broker and never acted on by the Core, the SDK or the examples.
 */
export function isCommandTopic(topic: string): boolean {
  if (!topic.startsWith(`${ROOT}/`)) return false;
  if (topic.startsWith(`${ROOT}/call/`)) return true;
  const kind = parseTopic(topic)?.kind;
  return kind !== undefined && COMMAND_KINDS.has(kind);
}

/** Topic kind → payload type: the typed topic map. */
export interface TopicPayloads {
  'core/status': CoreStatusMessage;
  register: RegisterMessage;
  registered: RegistrationAck;
  unregister: UnregisterMessage;
  status: PluginStatusMessage;
  heartbeat: HeartbeatMessage;
  invoke: PluginRequest;
  result: PluginResult;
  control: ControlMessage;
  notify: PluginNotifyMessage;
  notified: PluginNotifyAck;
  'channel/in': ChannelMessageIn;
  'channel/out': ChannelMessageOut;
  event: JsonObject;
  call: CallRequest;
  'call/result': PluginResult;
  'call/invalid': CallRejection;
  'ha/core-state': HaCoreState;
  'ha/plugin-state': HaPluginState;
  /** The plain-text payload a Home Assistant button publishes ("PRESS"). */
  'ha/press': string;
  'ha/discovery': JsonObject;
  /** Home Assistant's plain-text birth and will. */
  'ha/status': string;
}

export type TopicKind = keyof TopicPayloads;

export interface ParsedTopic {
  kind: TopicKind;
  /** plugin id, request id, channel name or discovery object id, when the topic carries one. */
  param?: string;
  /** The capability id of call and button topics. */
  capability?: string;
}

/**
 * Recognises a topic of the tree (and Home Assistant's discovery and status topics under haPrefix);
 * null for anything else. The params are NOT validated here.
 */
export function parseTopic(topic: string, haPrefix: string = HA_DEFAULT_PREFIX): ParsedTopic | null {
  const parts = topic.split('/');
  if (parts[0] === haPrefix && parts[0] !== ROOT) return parseHaTopic(parts);
  if (parts[0] !== ROOT) return null;
  if (parts[1] === 'call' && parts.length === 4) return { kind: 'call', param: parts[2], capability: parts[3] };
  if (parts[1] === 'call_result' && parts.length === 3) {
    return parts[2] === '_invalid' ? { kind: 'call/invalid' } : { kind: 'call/result', param: parts[2] };
  }
  if (parts[1] === 'ha') return parseHomeclawHaTopic(parts);
  if (parts.length === 3 && parts[1] === 'core' && parts[2] === 'status') return { kind: 'core/status' };
  if (parts[1] === 'plugins') {
    if (parts.length === 3 && parts[2] === 'register') return { kind: 'register' };
    if (parts.length === 3 && parts[2] === 'unregister') return { kind: 'unregister' };
    if (parts.length === 4) {
      const kinds: Record<string, TopicKind> = {
        registered: 'registered',
        status: 'status',
        heartbeat: 'heartbeat',
        invoke: 'invoke',
        result: 'result',
        control: 'control',
        notify: 'notify',
        notified: 'notified',
      };
      const kind = kinds[parts[2] ?? ''];
      if (kind) return { kind, param: parts[3] };
    }
    return null;
  }
  if (parts[1] === 'channels' && parts.length === 4) {
    if (parts[3] === 'in') return { kind: 'channel/in', param: parts[2] };
    if (parts[3] === 'out') return { kind: 'channel/out', param: parts[2] };
    return null;
  }
  if (parts[1] === 'events' && parts.length === 3) return { kind: 'event', param: parts[2] };
  return null;
}

function parseHaTopic(parts: string[]): ParsedTopic | null {
  if (parts.length === 2 && parts[1] === 'status') return { kind: 'ha/status' };
  if (parts.length === 4 && parts[1] === 'device' && parts[3] === 'config') return { kind: 'ha/discovery', param: parts[2] };
  return null;
}

function parseHomeclawHaTopic(parts: string[]): ParsedTopic | null {
  if (parts.length === 4 && parts[2] === 'core' && parts[3] === 'state') return { kind: 'ha/core-state' };
  if (parts[2] !== 'plugins') return null;
  if (parts.length === 5 && parts[4] === 'state') return { kind: 'ha/plugin-state', param: parts[3] };
  if (parts.length === 6 && parts[4] === 'press') return { kind: 'ha/press', param: parts[3], capability: parts[5] };
  return null;
}

/**
 * Zigbee2MQTT's topics under its configurable base topic (default `zigbee2mqtt`). A friendly name may
 * contain '/', so a device's topics cannot be told apart by wildcards: the Core subscribes to `<base>/#`
 * and parseZigbee2mqttTopic sorts the messages by the friendly names it knows.
 */
export const zigbee2mqttTopics = {
  bridgeDevices: (base: string): string => `${base}/bridge/devices`,
  bridgeEvent: (base: string): string => `${base}/bridge/event`,
  bridgeState: (base: string): string => `${base}/bridge/state`,
  deviceState: (base: string, friendlyName: string): string => `${base}/${friendlyName}`,
  availability: (base: string, friendlyName: string): string => `${base}/${friendlyName}/availability`,
  set: (base: string, friendlyName: string): string => `${base}/${friendlyName}/set`,
  get: (base: string, friendlyName: string): string => `${base}/${friendlyName}/get`,
} as const;

export const zigbee2mqttFilters = {
  /** Everything Zigbee2MQTT publishes: the bridge topics and every device's state and availability. */
  all: (base: string): string => `${base}/#`,
} as const;

/** Zigbee2MQTT topic kind → payload type. */
export interface Zigbee2mqttTopicPayloads {
  'bridge/devices': Z2mDevice[];
  'bridge/event': Z2mBridgeEvent;
  'bridge/state': Z2mOnlineState;
  state: Z2mDeviceState;
  availability: Z2mOnlineState;
  set: Z2mSetCommand;
  get: Z2mGetCommand;
}

export type Zigbee2mqttTopicKind = keyof Zigbee2mqttTopicPayloads;

export interface ParsedZigbee2mqttTopic {
  kind: Zigbee2mqttTopicKind;
  friendly_name?: string;
}

/**
 * Sorts a topic under `<base>/`. The bridge's list, event and state topics come first; then a known
 * friendly name is a state message; then the `/availability`, `/set` and `/get` suffixes, whose friendly
 * name is returned even when unknown (a retained availability may arrive before the device list).
 * Zigbee2MQTT's other bridge topics (info, logging, responses...) and unknown names give null.
 */
export function parseZigbee2mqttTopic(base: string, topic: string, isKnownName: (name: string) => boolean): ParsedZigbee2mqttTopic | null {
  if (!topic.startsWith(`${base}/`)) return null;
  const rest = topic.slice(base.length + 1);
  if (rest === 'bridge/devices') return { kind: 'bridge/devices' };
  if (rest === 'bridge/event') return { kind: 'bridge/event' };
  if (rest === 'bridge/state') return { kind: 'bridge/state' };
  if (isKnownName(rest)) return { kind: 'state', friendly_name: rest };
  for (const kind of ['availability', 'set', 'get'] as const) {
    const suffix = `/${kind}`;
    if (!rest.endsWith(suffix) || rest.length === suffix.length) continue;
    const name = rest.slice(0, -suffix.length);
    // Zigbee2MQTT's other bridge topics (bridge/info, bridge/response/...) are not devices.
    if (isKnownName(name) || !name.startsWith('bridge/')) return { kind, friendly_name: name };
  }
  return null;
}

const PLUS = 43;
const HASH = 35;

/**
 * MQTT wildcard matching for filters with + and #. Runs for every message against every subscription
 * of the Core, so it walks both strings in place, comparing character codes: no split, no slice.
 */
export function topicMatches(filter: string, topic: string): boolean {
  if (filter === topic) return true;
  let f = 0;
  let t = 0;
  while (f < filter.length) {
    let fEnd = filter.indexOf('/', f);
    if (fEnd === -1) fEnd = filter.length;
    const wildcard = fEnd - f === 1 ? filter.charCodeAt(f) : 0;
    if (wildcard === HASH) return true;
    if (t > topic.length) return false;
    let tEnd = topic.indexOf('/', t);
    if (tEnd === -1) tEnd = topic.length;
    if (wildcard !== PLUS) {
      const length = fEnd - f;
      if (length !== tEnd - t) return false;
      for (let i = 0; i < length; i++) if (filter.charCodeAt(f + i) !== topic.charCodeAt(t + i)) return false;
    }
    f = fEnd + 1;
    t = tEnd + 1;
  }
  return t > topic.length;
}
