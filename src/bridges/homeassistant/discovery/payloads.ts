// Home Assistant MQTT device-based discovery payloads for the Core and each plugin, as Home Assistant's
// MQTT integration validates them (components/mqtt/schemas.py DEVICE_DISCOVERY_SCHEMA): a device with at
// least one identifier, an origin with a name, and components, each with its platform and a unique_id,
// plus what its platform requires (binary_sensor and sensor: state_topic; button: command_topic).
// Abbreviations follow Home Assistant's list: dev, o, cmps, p, avty, ids, mf, mdl, sw.
import { topics } from '../../../protocol/topics.js';
import type { CapabilitySpec, JsonObject } from '../../../protocol/types.js';
import type { PluginRecord } from '../../../registry/record.js';
import { packageVersion } from '../../../kit/package-version.js';

export const CORE_OBJECT_ID = 'homeclaw_core';
export const ORIGIN_NAME = 'HomeClaw Bus';
const VERSION = packageVersion();
/** What a Home Assistant button publishes when pressed (its payload_press). */
export const PRESS_PAYLOAD = 'PRESS';

/** Availability from the Core's retained birth and will on homeclaw/core/status ({online, ts}). */
function coreAvailability(): JsonObject[] {
  return [{ topic: topics.coreStatus(), value_template: "{{ 'online' if value_json.online else 'offline' }}" }];
}

/** homeclaw_<plugin_id>; the plugin "core" gets homeclaw_plugin_core so it never takes the Core's device. */
export function pluginObjectId(pluginId: string): string {
  return pluginId === 'core' ? 'homeclaw_plugin_core' : `homeclaw_${pluginId}`;
}

/** A capability gets a button when it can be called without parameters. */
export function hasButton(record: PluginRecord, capability: CapabilitySpec): boolean {
  // Home Assistant's own tools are already Home Assistant entities; a button to call them would loop back.
  if (record.descriptor.type === 'homeassistant') return false;
  return capability.parameters.every((parameter) => !parameter.required);
}

export function coreDiscovery(): JsonObject {
  const state = topics.haCoreState();
  const availability = coreAvailability();
  return {
    dev: { ids: [CORE_OBJECT_ID], name: 'HomeClaw Core', mf: ORIGIN_NAME, mdl: 'Core', sw: VERSION },
    o: { name: ORIGIN_NAME, sw: VERSION },
    cmps: {
      // No availability: when the Core is gone its will turns this off instead of making it unavailable.
      connectivity: {
        p: 'binary_sensor',
        unique_id: `${CORE_OBJECT_ID}_connectivity`,
        name: 'Connectivity',
        device_class: 'connectivity',
        state_topic: topics.coreStatus(),
        value_template: "{{ 'ON' if value_json.online else 'OFF' }}",
      },
      plugins_online: {
        p: 'sensor',
        unique_id: `${CORE_OBJECT_ID}_plugins_online`,
        name: 'Plugins online',
        state_topic: state,
        value_template: '{{ value_json.plugins_online }}',
        unit_of_measurement: 'plugins',
        state_class: 'measurement',
        icon: 'mdi:puzzle',
        availability,
      },
      calls_per_minute: {
        p: 'sensor',
        unique_id: `${CORE_OBJECT_ID}_calls_per_minute`,
        name: 'Calls per minute',
        state_topic: state,
        value_template: '{{ value_json.calls_per_minute }}',
        unit_of_measurement: 'calls/min',
        state_class: 'measurement',
        icon: 'mdi:swap-horizontal',
        availability,
      },
      retrieval: {
        p: 'sensor',
        unique_id: `${CORE_OBJECT_ID}_retrieval`,
        name: 'Retrieval',
        state_topic: state,
        value_template: '{{ value_json.retrieval }}',
        device_class: 'enum',
        options: ['ok', 'degraded', 'disabled'],
        json_attributes_topic: state,
        json_attributes_template: "{{ {'reason': value_json.retrieval_reason} | tojson }}",
        entity_category: 'diagnostic',
        availability,
      },
    },
  };
}

export function pluginDiscovery(record: PluginRecord): JsonObject {
  const { descriptor } = record;
  const objectId = pluginObjectId(descriptor.id);
  const state = topics.haPluginState(descriptor.id);
  const components: JsonObject = {
    connectivity: {
      p: 'binary_sensor',
      unique_id: `${objectId}_connectivity`,
      name: 'Connectivity',
      device_class: 'connectivity',
      state_topic: state,
      value_template: "{{ 'ON' if value_json.state == 'online' else 'OFF' }}",
      json_attributes_topic: state,
      json_attributes_template: "{{ {'state': value_json.state, 'reason': value_json.reason} | tojson }}",
    },
    last_outcome: {
      p: 'sensor',
      unique_id: `${objectId}_last_outcome`,
      name: 'Last outcome',
      state_topic: state,
      value_template: '{{ value_json.last_outcome }}',
      icon: 'mdi:check-circle-outline',
      entity_category: 'diagnostic',
    },
    last_latency: {
      p: 'sensor',
      unique_id: `${objectId}_last_latency`,
      name: 'Last latency',
      state_topic: state,
      value_template: '{{ value_json.last_latency_ms }}',
      unit_of_measurement: 'ms',
      device_class: 'duration',
      state_class: 'measurement',
      entity_category: 'diagnostic',
    },
  };
  for (const capability of descriptor.capabilities) {
    if (!hasButton(record, capability)) continue;
    components[`call_${capability.id}`] = {
      p: 'button',
      unique_id: `${objectId}_call_${capability.id}`,
      name: capability.name || capability.id,
      command_topic: topics.haPress(descriptor.id, capability.id),
      payload_press: PRESS_PAYLOAD,
      icon: 'mdi:play-circle-outline',
    };
  }
  return {
    dev: {
      ids: [objectId],
      name: `HomeClaw ${descriptor.name}`,
      mf: ORIGIN_NAME,
      mdl: `${descriptor.type} plugin`,
      ...(descriptor.version ? { sw: descriptor.version } : {}),
      via_device: CORE_OBJECT_ID,
    },
    o: { name: ORIGIN_NAME, sw: VERSION },
    // Shared by every component: the plugin's entities are unavailable while the Core is gone.
    avty: coreAvailability(),
    cmps: components,
  };
}
