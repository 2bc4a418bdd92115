// Invocation of Zigbee2MQTT devices: `set` publishes <base>/<name>/set and answers with the next state
// message that echoes every set key; `get_state` refreshes what /get can read and answers with the last
// state. Parameters arrive validated against the device's exposes (the dispatcher checks them first).
import type { AdapterCall, HealthReport, PluginAdapter } from '../../adapters/adapter.js';
import { failure } from '../../adapters/plugin-result.js';
import type { CoreBus } from '../../bus/core-bus.js';
import type { Logger } from '../../log.js';
import { zigbee2mqttTopics } from '../../protocol/topics.js';
import type { JsonObject, PluginResult } from '../../protocol/types.js';
import type { Z2mGetCommand } from '../../protocol/zigbee2mqtt.js';
import type { PluginRecord } from '../../registry/record.js';
import { deviceConfigOf, type DeviceConfig } from './device-descriptor.js';
import type { DeviceStates } from './device-states.js';
import { age, stateText } from './state-text.js';

export interface Zigbee2mqttAdapterDeps {
  bus: CoreBus;
  base_topic: string;
  states: DeviceStates;
  confirm_timeout_sec: number;
  log: Logger;
  now?: () => number;
}

export class Zigbee2mqttAdapter implements PluginAdapter {
  readonly type = 'zigbee2mqtt' as const;
  private readonly now: () => number;

  constructor(private readonly deps: Zigbee2mqttAdapterDeps) {
    this.now = deps.now ?? Date.now;
  }

  async invoke(call: AdapterCall): Promise<PluginResult> {
    const device = deviceConfigOf(call.record.descriptor.config);
    if (!device) return failure(call.request, `plugin ${call.record.descriptor.id} has no Zigbee2MQTT device in its config`, 'adapter_error');
    switch (call.capability.id) {
      case 'set':
        return this.set(call, device);
      case 'get_state':
        return this.getState(call, device);
      default:
        return failure(call.request, `Zigbee2MQTT devices have no capability "${call.capability.id}"`, 'not_found');
    }
  }

  async health(record: PluginRecord): Promise<HealthReport> {
    const device = deviceConfigOf(record.descriptor.config);
    const snapshot = device ? this.deps.states.get(device.friendly_name) : undefined;
    const reported = snapshot ? `; last state ${age(this.now() - snapshot.received_at)}` : '; no state reported yet';
    return { ok: record.state === 'online', detail: `${record.state_reason ?? record.state}${reported}` };
  }

  private async set(call: AdapterCall, device: DeviceConfig): Promise<PluginResult> {
    const { request, signal } = call;
    const values = request.parameters;
    const keys = Object.keys(values);
    if (keys.length === 0) {
      const known = call.capability.parameters.map((p) => p.name).join(', ');
      return failure(request, `nothing to set: give at least one of ${known}`, 'invalid_params');
    }
    const name = device.friendly_name;
    const timeoutMs = this.deps.confirm_timeout_sec * 1000;
    // Waiting starts before publishing: Zigbee2MQTT may answer before the publish call returns.
    const stopWaiting = new AbortController();
    const echo = this.deps.states.waitForNext(name, (message) => keys.every((key) => key in message), timeoutMs, AbortSignal.any([signal, stopWaiting.signal]));
    const published = await this.publish(zigbee2mqttTopics.set(this.deps.base_topic, name), values, request.plugin_id);
    if (published !== true) {
      stopWaiting.abort();
      return failure(request, published, 'adapter_error');
    }
    this.deps.log.info({ plugin_id: request.plugin_id, request_id: request.request_id, friendly_name: name, keys }, 'zigbee2mqtt set sent');
    const message = await echo;
    if (!message) {
      if (signal.aborted) return failure(request, 'the call ended before the device answered', 'cancelled');
      this.deps.log.warn({ plugin_id: request.plugin_id, friendly_name: name, keys }, 'zigbee2mqtt set not confirmed');
      return failure(
        request,
        `no confirmation from the device: "${name}" did not report ${keys.join(', ')} within ${this.deps.confirm_timeout_sec} s`,
        'timeout',
      );
    }
    const confirmed: JsonObject = {};
    for (const key of keys) if (message[key] !== undefined) confirmed[key] = message[key];
    const state = this.deps.states.get(name)?.state ?? message;
    return {
      request_id: request.request_id,
      plugin_id: request.plugin_id,
      success: true,
      text: `${name}: ${stateText(confirmed, device.units)} (confirmed by the device).`,
      data: { friendly_name: name, confirmed, state },
    };
  }

  private async getState(call: AdapterCall, device: DeviceConfig): Promise<PluginResult> {
    const { request, signal } = call;
    const name = device.friendly_name;
    const refresh = request.parameters['refresh'] !== false && device.readable_by_get.length > 0;
    let refreshed = false;
    if (refresh) {
      const stopWaiting = new AbortController();
      const answer = this.deps.states.waitForNext(name, () => true, this.deps.confirm_timeout_sec * 1000, AbortSignal.any([signal, stopWaiting.signal]));
      const command: Z2mGetCommand = {};
      for (const property of device.readable_by_get) command[property] = '';
      const published = await this.publish(zigbee2mqttTopics.get(this.deps.base_topic, name), command, request.plugin_id);
      if (published !== true) {
        stopWaiting.abort();
        return failure(request, published, 'adapter_error');
      }
      refreshed = (await answer) !== null;
      if (signal.aborted) return failure(request, 'the call ended before the device answered', 'cancelled');
    }
    const snapshot = this.deps.states.get(name);
    if (!snapshot) {
      const why = refresh ? ' and did not answer a request for it' : '';
      return {
        request_id: request.request_id,
        plugin_id: request.plugin_id,
        success: true,
        text: `${name} has not reported its state yet${why}.`,
        data: { friendly_name: name, state: null, refreshed: false },
      };
    }
    const stale =
      refresh && !refreshed
        ? ` (last reported ${age(this.now() - snapshot.received_at)}; the device did not answer a refresh within ${this.deps.confirm_timeout_sec} s)`
        : '';
    return {
      request_id: request.request_id,
      plugin_id: request.plugin_id,
      success: true,
      text: `${name}: ${stateText(snapshot.state, device.units)}${stale}.`,
      data: { friendly_name: name, state: snapshot.state, received_at: new Date(snapshot.received_at).toISOString(), refreshed },
    };
  }

  /** true, or why the command could not be handed to the broker. */
  private async publish(topic: string, payload: JsonObject, pluginId: string): Promise<true | string> {
    try {
      await this.deps.bus.publish(topic, JSON.stringify(payload), { qos: 1 });
      return true;
    } catch (err) {
      this.deps.log.warn({ err, plugin_id: pluginId, topic }, 'zigbee2mqtt command could not be published');
      return `could not send the command to Zigbee2MQTT: ${(err as Error).message}`;
    }
  }
}
