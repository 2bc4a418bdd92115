// Payload types of the wire contract. The JSON Schemas in topics/schemas are the one source: the types
// are generated from them (wire-types.generated.ts, `npm run gen:types`); this file re-exports them under
// the names the code uses and adds the run-time lists of their enums.
import type { ParameterType, PluginNotifyAck, PluginType, SystemKey } from './wire-types.generated.js';

export type {
  CallRejection,
  CallRequest,
  CapabilitySpec,
  ChannelMessageIn,
  ChannelMessageOut,
  ControlMessage,
  CoreStatusMessage,
  ErrorCode,
  HaCoreState,
  HaPluginState,
  HeartbeatMessage,
  JsonObject,
  JsonValue,
  ParameterSpec,
  ParameterType,
  PluginConfig,
  PluginDescriptor,
  PluginNotifyAck,
  PluginNotifyMessage,
  PluginRequest,
  PluginResult,
  PluginSource,
  PluginStatusMessage,
  PluginType,
  RegisterMessage,
  RegistrationAck,
  SystemKey,
  UnregisterMessage,
  ValidationIssue,
} from './wire-types.generated.js';

/** Why the Core refused a plugin's notification (plugin-notify-ack.schema.json's error_code). */
export type NotifyErrorCode = NonNullable<PluginNotifyAck['error_code']>;

/** Every member of the union T, in a fixed order: the compiler refuses a list that misses or adds one. */
function everyMember<T extends string>() {
  return <const A extends readonly T[]>(values: A & ([T] extends [A[number]] ? unknown : 'a member of the schema enum is missing')): A => values;
}

export const PARAMETER_TYPES = everyMember<ParameterType>()(['string', 'number', 'integer', 'boolean', 'object', 'array']);

export const PLUGIN_TYPES = everyMember<PluginType>()(['inline', 'mqtt', 'http', 'subprocess', 'mcp', 'homeassistant', 'zigbee2mqtt', 'python']);

/** System values the resolver can fill from the request context. */
export const SYSTEM_KEYS = everyMember<SystemKey>()(['datetime', 'date', 'time', 'timezone', 'location', 'user_id', 'channel']);
