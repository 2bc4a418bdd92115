// Who may publish and subscribe what on the embedded broker. Pure rules over a client identity, so the
// table-driven test and docs/external-broker-acl.md can be checked against the same function.
import { isPluginId, isRequestId } from '../protocol/ids.js';
import { parseTopic, topics } from '../protocol/topics.js';
import type { CredentialRole } from './credentials.js';

export interface ClientIdentity {
  clientId: string;
  /** Set when the client logged in with a credential. */
  username?: string;
  /** undefined for anonymous clients. */
  role?: CredentialRole;
  /** Plugin ids a plugin credential may act for. */
  pluginIds: readonly string[];
  /** Channels a channel credential may act for. */
  channels: readonly string[];
  /** Users a channel or caller credential may act as ("*" = anyone); undefined for other roles. */
  users?: readonly string[];
}

export interface AclContext {
  /**
   * The plugin a pending request was sent to (from the dispatcher); undefined when the request id is
   * unknown or already finished. Without it no plugin may publish results.
   */
  requestTarget?: (requestId: string) => string | undefined;
  /**
   * Extra ownership beyond the credential's plugin_ids, e.g. ids the registry recorded for this user.
   * Consulted only for authenticated plugin clients.
   */
  ownsPluginId?: (username: string, pluginId: string) => boolean;
  /**
   * Zigbee2MQTT's base topic when the bridge is on: a zigbee2mqtt credential may publish and subscribe
   * under it and nowhere else. Undefined: such a credential may do nothing.
   */
  zigbee2mqttBaseTopic?: string;
}

export type AclDecision = { allowed: true } | { allowed: false; reason: string };

const ALLOW: AclDecision = { allowed: true };
const deny = (reason: string): AclDecision => ({ allowed: false, reason });

const SYS_PREFIX = '$SYS/';
/** A capability id as one topic level (never a wildcard). */
const CAPABILITY_LEVEL = /^[A-Za-z0-9_-]{1,64}$/;

function ownsPlugin(identity: ClientIdentity, pluginId: string | undefined, context: AclContext): boolean {
  if (!isPluginId(pluginId)) return false;
  if (identity.pluginIds.includes(pluginId)) return true;
  return identity.username !== undefined && context.ownsPluginId?.(identity.username, pluginId) === true;
}

export function authorizePublishTopic(identity: ClientIdentity, topic: string, context: AclContext): AclDecision {
  if (topic.startsWith(SYS_PREFIX)) return deny('$SYS topics are reserved for the broker');
  if (identity.role === 'admin') return ALLOW;
  if (identity.role === undefined) {
    // Anonymous clients exist only on a loopback-only broker (or when the operator said so); they may do
    // anything but impersonate the Core, whose retained status tells plugins when to re-register.
    return topic === topics.coreStatus() ? deny('only the Core publishes its status') : ALLOW;
  }
  if (identity.role === 'zigbee2mqtt') return zigbee2mqttDecision(topic, context, 'publishes');
  const parsed = parseTopic(topic);
  if (identity.role === 'channel') {
    if (parsed?.kind === 'channel/in' && parsed.param !== undefined && identity.channels.includes(parsed.param)) {
      return ALLOW;
    }
    return deny('a channel publishes only on its own channel input topic');
  }
  if (identity.role === 'caller') {
    // Which plugin and capability exist is the dispatcher's to answer, on call_result.
    if (parsed?.kind === 'call' && isPluginId(parsed.param) && CAPABILITY_LEVEL.test(parsed.capability ?? '')) return ALLOW;
    return deny(`a caller publishes only calls on ${topics.call('<plugin_id>', '<capability_id>')}`);
  }
  // plugin
  switch (parsed?.kind) {
    case 'register':
    case 'unregister':
      // The topic is shared; which ids a register may claim is decided by the registry, which can answer
      // with a clear error (publisher.pluginIds carries the credential's ids).
      return ALLOW;
    case 'heartbeat':
    case 'status':
    case 'notify':
      return ownsPlugin(identity, parsed.param, context) ? ALLOW : deny(`plugin id "${parsed.param ?? ''}" does not belong to this credential`);
    case 'result': {
      const target = parsed.param === undefined ? undefined : context.requestTarget?.(parsed.param);
      if (target === undefined) return deny('result for an unknown or finished request');
      return ownsPlugin(identity, target, context) ? ALLOW : deny('result for a request sent to another plugin');
    }
    default:
      return deny('a plugin publishes only register, unregister, its own heartbeat/status/notify and its results');
  }
}

export function authorizeSubscribeFilter(identity: ClientIdentity, filter: string, context: AclContext): AclDecision {
  if (identity.role === 'admin' || identity.role === undefined) return ALLOW;
  if (filter === topics.coreStatus()) return ALLOW;
  if (identity.role === 'zigbee2mqtt') return zigbee2mqttDecision(filter, context, 'subscribes');
  const parsed = parseTopic(filter);
  if (identity.role === 'channel') {
    if (parsed?.kind === 'channel/out' && parsed.param !== undefined && identity.channels.includes(parsed.param)) {
      return ALLOW;
    }
    return deny('a channel subscribes only to its own channel output topic and the Core status');
  }
  if (identity.role === 'caller') {
    // Exact result topics only: a caller reads the results of the request ids it chose, not everyone's.
    if (parsed?.kind === 'call/invalid' || (parsed?.kind === 'call/result' && isRequestId(parsed.param))) return ALLOW;
    return deny(`a caller subscribes only to ${topics.callResult('<its request_id>')}, ${topics.callResultInvalid()} and the Core status`);
  }
  // plugin: exact topics only, never wildcards (a + in the param fails the plugin id check)
  if (filter === topics.registeredInvalid()) return ALLOW;
  if (parsed && (parsed.kind === 'invoke' || parsed.kind === 'control' || parsed.kind === 'registered' || parsed.kind === 'notified')) {
    return ownsPlugin(identity, parsed.param, context) ? ALLOW : deny(`plugin id "${parsed.param ?? ''}" does not belong to this credential`);
  }
  return deny('a plugin subscribes only to its own invoke, control, registered and notified topics and the Core status');
}

/** A Zigbee2MQTT login stays under its base topic: it can neither read nor forge HomeClaw traffic. */
function zigbee2mqttDecision(topicOrFilter: string, context: AclContext, verb: 'publishes' | 'subscribes'): AclDecision {
  const base = context.zigbee2mqttBaseTopic;
  if (base === undefined) return deny('the Zigbee2MQTT bridge is off (zigbee2mqtt.enabled: false)');
  if (topicOrFilter.startsWith(`${base}/`)) return ALLOW;
  return deny(`a zigbee2mqtt credential ${verb} only under ${base}/`);
}

export type AnonymousSetting = boolean | 'auto';

export function isLoopbackHost(host: string): boolean {
  const normalized = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  if (normalized === 'localhost' || normalized === '::1') return true;
  const v4 = normalized.startsWith('::ffff:') ? normalized.slice(7) : normalized;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** 'auto' allows anonymous clients only while nothing but this machine can reach any listener. */
export function anonymousAllowed(setting: AnonymousSetting, listenerHosts: readonly string[]): boolean {
  if (setting === true || setting === false) return setting;
  return listenerHosts.every(isLoopbackHost);
}
