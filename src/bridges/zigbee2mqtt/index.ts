// The Zigbee2MQTT bridge as the Core starts it: the device cache, the adapter that invokes devices and
// the bridge that keeps the registry in step, sharing one subscription to Zigbee2MQTT's topics.
import type { CoreBus } from '../../bus/core-bus.js';
import type { Zigbee2mqttConfig } from '../../config/types.js';
import type { Logger } from '../../log.js';
import { zigbee2mqttTopics } from '../../protocol/topics.js';
import type { RegistryApi } from '../../registry/registry-api.js';
import { Zigbee2mqttAdapter } from './adapter.js';
import { Zigbee2mqttBridge, ZIGBEE2MQTT_OWNER } from './bridge.js';
import { DeviceStates } from './device-states.js';

export { ZIGBEE2MQTT_OWNER } from './bridge.js';

/**
 * The largest device list accepted: about 5 KB per device in Zigbee2MQTT's format, so room for a few
 * thousand devices, where the usual payload limit would stop at a few dozen.
 */
export const ZIGBEE2MQTT_DEVICES_MAX_BYTES = 16 * 1024 * 1024;

export interface Zigbee2mqttDeps {
  bus: CoreBus;
  registry: RegistryApi;
  config: Zigbee2mqttConfig;
  log: Logger;
  max_payload_bytes: number;
}

export interface RunningZigbee2mqtt {
  adapter: Zigbee2mqttAdapter;
  bridge: Zigbee2mqttBridge;
  stop(): Promise<void>;
}

export async function startZigbee2mqtt(deps: Zigbee2mqttDeps): Promise<RunningZigbee2mqtt> {
  const states = new DeviceStates();
  const adapter = new Zigbee2mqttAdapter({
    bus: deps.bus,
    base_topic: deps.config.base_topic,
    states,
    confirm_timeout_sec: deps.config.confirm_timeout_sec,
    log: deps.log,
  });
  const bridge = new Zigbee2mqttBridge({
    bus: deps.bus,
    registry: deps.registry,
    states,
    config: deps.config,
    log: deps.log,
    max_payload_bytes: deps.max_payload_bytes,
    devices_max_bytes: ZIGBEE2MQTT_DEVICES_MAX_BYTES,
  });
  await bridge.start();
  return { adapter, bridge, stop: () => bridge.stop() };
}

/** The embedded broker's size cap for Zigbee2MQTT's device list (undefined: the usual cap). */
export function zigbee2mqttPayloadCap(config: Zigbee2mqttConfig): (topic: string) => number | undefined {
  const devicesTopic = zigbee2mqttTopics.bridgeDevices(config.base_topic);
  return (topic) => (config.enabled && topic === devicesTopic ? ZIGBEE2MQTT_DEVICES_MAX_BYTES : undefined);
}

/**
 * With the bridge turned off, the devices it registered in an earlier run are removed: nothing could
 * reach them, and they would linger in search results. They come back when the bridge is turned on.
 */
export function removeBridgedPlugins(registry: RegistryApi, log: Logger): number {
  let removed = 0;
  for (const record of registry.list()) {
    if (record.owner !== ZIGBEE2MQTT_OWNER) continue;
    if (registry.unregister(record.descriptor.id, ZIGBEE2MQTT_OWNER).ok) removed++;
  }
  if (removed > 0) log.info({ removed }, 'Zigbee2MQTT bridge is off: removed the devices it had registered');
  return removed;
}
