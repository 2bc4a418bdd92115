// Keeps the registry in step with a Zigbee2MQTT installation. The retained device list is the truth:
// every interviewed device with a definition is a plugin, a renamed one is registered under its new id,
// one that left is unregistered. Availability and the bridge's own state make plugins online or
// offline; state messages feed the cache the adapter answers from. Bad payloads are logged and dropped.
import type { CoreBus, IncomingMessage } from '../../bus/core-bus.js';
import type { Zigbee2mqttConfig } from '../../config/types.js';
import type { Logger } from '../../log.js';
import { validateCanonicalDescriptor } from '../../protocol/descriptor/canonical.js';
import { parseZigbee2mqttTopic, zigbee2mqttFilters } from '../../protocol/topics.js';
import type { JsonObject } from '../../protocol/types.js';
import { validateWithSchema, validateWithSchemaAt } from '../../protocol/validate.js';
import type { Z2mBridgeEvent, Z2mDevice } from '../../protocol/zigbee2mqtt.js';
import type { PluginState } from '../../registry/record.js';
import type { RegistryApi } from '../../registry/registry-api.js';
import { deviceConfigOf, deviceDescriptor } from './device-descriptor.js';
import { assignPluginIds, classifyDevice } from './device-list.js';
import type { DeviceStates } from './device-states.js';
import { parseJsonText, parseOnlineState } from './payloads.js';
import { formatIssues } from '../../kit/format-issues.js';

/** The registry owner of every plugin this bridge registers. */
export const ZIGBEE2MQTT_OWNER = 'zigbee2mqtt';

export interface Zigbee2mqttBridgeDeps {
  bus: CoreBus;
  registry: RegistryApi;
  states: DeviceStates;
  config: Zigbee2mqttConfig;
  log: Logger;
  /** Limit for state, availability and event payloads. */
  max_payload_bytes: number;
  /** Limit for the device list, which grows with the network. */
  devices_max_bytes: number;
}

interface BridgedDevice {
  ieee_address: string;
  friendly_name: string;
  plugin_id: string;
}

/** Availability is remembered for names not yet in the device list, within reason. */
const MAX_REMEMBERED_AVAILABILITY = 10_000;

export class Zigbee2mqttBridge {
  private readonly devices = new Map<string, BridgedDevice>();
  private readonly byName = new Map<string, string>();
  private readonly availability = new Map<string, 'online' | 'offline'>();
  private readonly skipped = new Map<string, string>();
  private bridgeState: 'online' | 'offline' | undefined;
  private unsubscribe: (() => Promise<void>) | undefined;
  private readonly base: string;

  constructor(private readonly deps: Zigbee2mqttBridgeDeps) {
    this.base = deps.config.base_topic;
  }

  async start(): Promise<void> {
    // Plugins kept from the last run wait for Zigbee2MQTT to confirm them (its state, then its list).
    for (const record of this.deps.registry.list()) {
      if (record.owner !== ZIGBEE2MQTT_OWNER) continue;
      const device = deviceConfigOf(record.descriptor.config);
      if (!device) continue;
      this.remember({ ieee_address: device.ieee_address, friendly_name: device.friendly_name, plugin_id: record.descriptor.id });
      this.deps.registry.setState(record.descriptor.id, 'offline', 'waiting for Zigbee2MQTT to report its devices');
    }
    const filter = zigbee2mqttFilters.all(this.base);
    this.unsubscribe = await this.deps.bus.subscribe(filter, (message) => this.onMessage(message));
    // An external broker replays retained messages on subscribe; the embedded one is asked for them.
    if (this.deps.bus.readRetained) for (const message of await this.deps.bus.readRetained(filter)) this.onMessage(message);
    this.deps.log.info({ base_topic: this.base, known_devices: this.devices.size }, 'Zigbee2MQTT bridge listening');
  }

  async stop(): Promise<void> {
    await this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.deps.states.clear();
  }

  /** Plugin ids of the bridged devices (for status and tests). */
  pluginIds(): string[] {
    return [...this.devices.values()].map((d) => d.plugin_id).sort();
  }

  private onMessage(message: IncomingMessage): void {
    const parsed = parseZigbee2mqttTopic(this.base, message.topic, (name) => this.byName.has(name));
    if (!parsed) return;
    try {
      switch (parsed.kind) {
        case 'bridge/devices':
          return this.onDevices(message);
        case 'bridge/event':
          return this.onEvent(message);
        case 'bridge/state':
          return this.onBridgeState(message);
        case 'state':
          return this.onState(parsed.friendly_name as string, message);
        case 'availability':
          return this.onAvailability(parsed.friendly_name as string, message);
        default:
          return; // set/get: commands, the Core's own included
      }
    } catch (err) {
      this.deps.log.error({ err, topic: message.topic }, 'Zigbee2MQTT message could not be handled');
    }
  }

  private onDevices(message: IncomingMessage): void {
    if (message.payload.length === 0) return; // the retained list was cleared
    const parsed = parseJsonText(message.payload, this.deps.devices_max_bytes);
    if (!parsed.ok || !Array.isArray(parsed.value)) {
      this.deps.log.warn({ topic: message.topic, problem: parsed.ok ? 'not a JSON array' : parsed.error }, 'Zigbee2MQTT device list ignored');
      return;
    }
    const candidates: (Z2mDevice & { definition: NonNullable<Z2mDevice['definition']> })[] = [];
    parsed.value.forEach((entry, index) => {
      const valid = validateWithSchemaAt<Z2mDevice>('zigbee2mqtt-devices', '/$defs/device', entry);
      if (!valid.ok) {
        this.logSkip(`#${index}`, `entry ${index}`, `it does not look like a Zigbee2MQTT device: ${formatIssues(valid.errors)}`);
        return;
      }
      const verdict = classifyDevice(valid.value);
      if (!verdict.bridge) this.logSkip(valid.value.ieee_address, valid.value.friendly_name, verdict.reason);
      else candidates.push(verdict.device);
    });
    const ids = assignPluginIds(candidates, this.devices);
    const listed = new Map(candidates.map((d) => [d.ieee_address, d]));
    const idsInUse = new Set(ids.values());
    // Departures and renames first, so a new device may take over a name another one just gave up.
    for (const known of [...this.devices.values()]) {
      const now = listed.get(known.ieee_address);
      if (!now) this.remove(known, "it is no longer in Zigbee2MQTT's device list");
      else if (now.friendly_name !== known.friendly_name || ids.get(known.ieee_address) !== known.plugin_id) {
        this.rename(known, now.friendly_name, ids.get(known.ieee_address) as string, idsInUse);
      }
    }
    // Treat Zigbee2MQTT as online once it has published a list, unless it said otherwise.
    this.bridgeState ??= 'online';
    for (const device of candidates) this.register(device, ids.get(device.ieee_address) as string);
  }

  private rename(device: BridgedDevice, to: string, pluginId: string, idsInUse: ReadonlySet<string>): void {
    this.deps.log.info({ from: device.friendly_name, to, plugin_id: pluginId, previous_plugin_id: device.plugin_id }, 'Zigbee2MQTT device renamed');
    this.forget(device);
    if (pluginId !== device.plugin_id && !idsInUse.has(device.plugin_id)) this.deps.registry.unregister(device.plugin_id, ZIGBEE2MQTT_OWNER);
    if (device.friendly_name !== to) this.deps.states.rename(device.friendly_name, to);
  }

  private register(device: Z2mDevice & { definition: NonNullable<Z2mDevice['definition']> }, pluginId: string): void {
    const { descriptor, controls } = deviceDescriptor(device, pluginId, { confirm_timeout_sec: this.deps.config.confirm_timeout_sec });
    const valid = validateCanonicalDescriptor(descriptor);
    if (!valid.ok) {
      this.logSkip(device.ieee_address, device.friendly_name, `its descriptor is invalid: ${formatIssues(valid.errors)}`);
      return;
    }
    const [state, reason] = this.desiredState(device.friendly_name);
    const outcome = this.deps.registry.register({
      descriptor: valid.value,
      owner: ZIGBEE2MQTT_OWNER,
      state,
      ...(reason ? { state_reason: reason } : {}),
    });
    if (!outcome.ok) {
      this.logSkip(device.ieee_address, device.friendly_name, outcome.errors.map((e) => e.message).join('; '));
      const known = this.devices.get(device.ieee_address);
      if (known) this.forget(known);
      return;
    }
    this.skipped.delete(device.ieee_address);
    this.remember({ ieee_address: device.ieee_address, friendly_name: device.friendly_name, plugin_id: pluginId });
    if (outcome.change !== 'unchanged') {
      this.deps.log.info(
        {
          plugin_id: pluginId,
          friendly_name: device.friendly_name,
          model: device.definition.model,
          change: outcome.change,
          unusable_properties: controls.unusable.length ? controls.unusable : undefined,
        },
        'Zigbee2MQTT device bridged',
      );
    }
  }

  private remove(device: BridgedDevice, why: string): void {
    this.forget(device);
    this.deps.states.forget(device.friendly_name);
    const outcome = this.deps.registry.unregister(device.plugin_id, ZIGBEE2MQTT_OWNER);
    if (outcome.ok) this.deps.log.info({ plugin_id: device.plugin_id, friendly_name: device.friendly_name, why }, 'Zigbee2MQTT device removed');
  }

  private onEvent(message: IncomingMessage): void {
    const parsed = parseJsonText(message.payload, this.deps.max_payload_bytes);
    const valid = parsed.ok ? validateWithSchema<Z2mBridgeEvent>('zigbee2mqtt-event', parsed.value) : undefined;
    if (!valid?.ok) {
      this.deps.log.warn({ topic: message.topic }, 'Zigbee2MQTT bridge event ignored: not a valid event');
      return;
    }
    const { type, data } = valid.value;
    const device = { friendly_name: data.friendly_name, ieee_address: data.ieee_address };
    if (type === 'device_leave') {
      const known = data.ieee_address ? this.devices.get(data.ieee_address) : undefined;
      if (known) this.remove(known, 'it left the Zigbee network');
      else this.deps.log.info(device, 'Zigbee2MQTT device left the network');
    } else if (type === 'device_joined') {
      this.deps.log.info(device, 'Zigbee2MQTT device joined; it becomes a plugin once interviewed');
    } else if (type === 'device_interview') {
      const level = data.status === 'failed' ? 'warn' : 'info';
      this.deps.log[level]({ ...device, status: data.status, supported: data.supported }, 'Zigbee2MQTT device interview');
    } else {
      this.deps.log.debug({ ...device, type }, 'Zigbee2MQTT bridge event');
    }
  }

  private onBridgeState(message: IncomingMessage): void {
    if (message.payload.length === 0) return;
    const state = parseOnlineState(message.payload);
    if (!state) {
      this.deps.log.warn({ topic: message.topic }, 'Zigbee2MQTT bridge state ignored: expected online or offline');
      return;
    }
    if (state === this.bridgeState) return;
    this.bridgeState = state;
    this.deps.log.info({ state, devices: this.devices.size }, `Zigbee2MQTT is ${state}`);
    for (const device of this.devices.values()) this.applyState(device);
  }

  private onAvailability(friendlyName: string, message: IncomingMessage): void {
    if (message.payload.length === 0) {
      // Zigbee2MQTT clears the retained availability of a renamed device's old name.
      this.availability.delete(friendlyName);
      return;
    }
    const state = parseOnlineState(message.payload);
    if (!state) {
      this.deps.log.warn({ topic: message.topic }, 'Zigbee2MQTT availability ignored: expected online or offline');
      return;
    }
    this.availability.delete(friendlyName);
    this.availability.set(friendlyName, state);
    if (this.availability.size > MAX_REMEMBERED_AVAILABILITY) this.availability.delete(this.availability.keys().next().value as string);
    const ieee = this.byName.get(friendlyName);
    const device = ieee ? this.devices.get(ieee) : undefined;
    if (device) this.applyState(device);
  }

  private onState(friendlyName: string, message: IncomingMessage): void {
    if (message.payload.length === 0) return; // a cleared retained state
    const parsed = parseJsonText(message.payload, this.deps.max_payload_bytes);
    const valid = parsed.ok ? validateWithSchema<JsonObject>('zigbee2mqtt-device-state', parsed.value) : undefined;
    if (!valid?.ok) {
      this.deps.log.warn({ topic: message.topic, friendly_name: friendlyName }, 'Zigbee2MQTT state ignored: not a JSON object');
      return;
    }
    this.deps.states.update(friendlyName, valid.value);
  }

  private desiredState(friendlyName: string): [PluginState, string | undefined] {
    if (this.bridgeState === 'offline') return ['offline', 'Zigbee2MQTT is offline'];
    if (this.bridgeState === undefined) return ['offline', 'waiting for Zigbee2MQTT to report its devices'];
    if (this.availability.get(friendlyName) === 'offline') return ['offline', 'Zigbee2MQTT reports the device offline'];
    return ['online', undefined];
  }

  private applyState(device: BridgedDevice): void {
    const [state, reason] = this.desiredState(device.friendly_name);
    this.deps.registry.setState(device.plugin_id, state, reason);
  }

  private remember(device: BridgedDevice): void {
    this.devices.set(device.ieee_address, device);
    this.byName.set(device.friendly_name, device.ieee_address);
  }

  private forget(device: BridgedDevice): void {
    this.devices.delete(device.ieee_address);
    if (this.byName.get(device.friendly_name) === device.ieee_address) this.byName.delete(device.friendly_name);
  }

  /** One log line per device and reason, however often Zigbee2MQTT republishes its list. */
  private logSkip(key: string, friendlyName: string, reason: string): void {
    if (this.skipped.get(key) === reason) return;
    this.skipped.set(key, reason);
    this.deps.log.info({ friendly_name: friendlyName, ieee_address: key, reason }, `Zigbee2MQTT device skipped: ${reason}`);
  }
}
