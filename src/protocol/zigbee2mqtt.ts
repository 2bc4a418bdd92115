// Payload types of the Zigbee2MQTT topics the Core reads and writes. Zigbee2MQTT owns this format; the
// types mirror its documentation ("MQTT topics and messages", "Exposes") and its bridge/devices code,
// and topics/schemas/zigbee2mqtt-*.schema.json are what the Core validates against.
import type { JsonObject, JsonValue } from './types.js';

/** The `access` bitmask of an expose: what Zigbee2MQTT can do with the property. */
export const ACCESS = {
  /** The property appears in the device's published state. */
  STATE: 1,
  /** The property can be changed with a `/set` command. */
  SET: 2,
  /** The property can be read with a `/get` command. */
  GET: 4,
} as const;

export interface Z2mPreset {
  name: string;
  value: JsonValue;
  description?: string;
}

/**
 * One expose: a generic one (binary, numeric, enum, text, composite, list) or a specific one (light,
 * switch, cover, lock, climate, fan) that groups generic features. Zigbee2MQTT adds fields over time,
 * so unknown fields are kept and ignored.
 */
export interface Z2mExpose {
  type: string;
  name?: string;
  label?: string;
  /** The key in the state and in /set and /get payloads (name plus `_<endpoint>` when on an endpoint). */
  property?: string;
  access?: number;
  endpoint?: string;
  description?: string;
  category?: string;
  features?: Z2mExpose[];
  values?: JsonValue[];
  value_on?: JsonValue;
  value_off?: JsonValue;
  value_toggle?: JsonValue;
  value_min?: number;
  value_max?: number;
  value_step?: number;
  unit?: string;
  presets?: Z2mPreset[];
  item_type?: Z2mExpose;
  length_min?: number;
  length_max?: number;
}

export interface Z2mDefinition {
  model: string;
  vendor: string;
  description: string;
  exposes: Z2mExpose[];
  options?: JsonValue[];
  supports_ota?: boolean;
  source?: 'native' | 'generated' | 'external';
  version?: string;
  icon?: string;
}

/** The interview states of zigbee-herdsman, as Zigbee2MQTT publishes them. */
export type Z2mInterviewState = 'PENDING' | 'IN_PROGRESS' | 'SUCCESSFUL' | 'FAILED';

/** One entry of the retained `<base>/bridge/devices` list. */
export interface Z2mDevice {
  ieee_address: string;
  /** Coordinator | Router | EndDevice (GreenPower devices also appear). */
  type: string;
  friendly_name: string;
  network_address?: number;
  supported?: boolean;
  disabled?: boolean;
  /** The user's own note about the device. */
  description?: string;
  /** Absent or null when the device is unsupported or not interviewed yet. */
  definition?: Z2mDefinition | null;
  power_source?: string | null;
  model_id?: string | null;
  manufacturer?: string | null;
  /** Older releases publish only these two booleans; newer ones add interview_state. */
  interviewing?: boolean;
  interview_completed?: boolean;
  interview_state?: Z2mInterviewState;
  [key: string]: unknown;
}

/** `<base>/bridge/event`: device_joined, device_interview, device_leave, device_announce. */
export interface Z2mBridgeEvent {
  type: string;
  data: {
    friendly_name?: string;
    ieee_address?: string;
    status?: string;
    supported?: boolean;
    definition?: Z2mDefinition | null;
    [key: string]: unknown;
  };
}

/**
 * `<base>/<name>/availability` and `<base>/bridge/state`: `{"state":"online"}`, or the bare text
 * `online` / `offline` when Zigbee2MQTT runs with `legacy_availability_payload: true`.
 */
export type Z2mOnlineState = { state: 'online' | 'offline' } | 'online' | 'offline';

/** `<base>/<name>`: the device's state, one JSON object whose keys are expose properties. */
export type Z2mDeviceState = JsonObject;
/** `<base>/<name>/set`: the properties to change. */
export type Z2mSetCommand = JsonObject;
/** `<base>/<name>/get`: the properties to read, each with an empty string as value. */
export type Z2mGetCommand = { [property: string]: '' };
