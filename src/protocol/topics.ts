// The topic tree of the plan §3, in one place. Every topic the code publishes or subscribes is built
// here, and test/protocol/topics.test.ts checks each one against topics/asyncapi.yaml.
import type {
  ChannelMessageIn,
  ChannelMessageOut,
  ControlMessage,
  CoreStatusMessage,
  HeartbeatMessage,
  PluginRequest,
  PluginResult,
  PluginStatusMessage,
  RegisterMessage,
  RegistrationAck,
  UnregisterMessage,
} from './types.js';
import type { JsonObject } from './types.js';

export const ROOT = 'homeclaw';

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
  channelIn: (channel: string): string => `${ROOT}/channels/${channel}/in`,
  channelOut: (channel: string): string => `${ROOT}/channels/${channel}/out`,
  events: (kind: EventKind): string => `${ROOT}/events/${kind}`,
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
} as const;

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
  'channel/in': ChannelMessageIn;
  'channel/out': ChannelMessageOut;
  event: JsonObject;
}

export type TopicKind = keyof TopicPayloads;

export interface ParsedTopic {
  kind: TopicKind;
  /** plugin id, request id or channel name, when the topic carries one. */
  param?: string;
}

/** Recognises a topic of the tree; null for anything else. The param is NOT validated here. */
export function parseTopic(topic: string): ParsedTopic | null {
  const parts = topic.split('/');
  if (parts[0] !== ROOT) return null;
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
