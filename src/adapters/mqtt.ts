// Invocation of plugins connected over MQTT: PluginRequest on invoke/<id>, PluginResult correlated
// by request_id on result/<request_id>. On an MQTT 5 session the request also carries a message expiry
// (the time left to its deadline, so a session that reconnects late never receives a stale command) and
// its W3C traceparent as a user property, and a broker that says nobody subscribes ends the call at once.
import type { CoreBus, IncomingMessage } from '../bus/core-bus.js';
import { ownerOf } from '../bus/core-bus.js';
import { PacketTooLargeError } from '../bus/mqtt5-session.js';
import type { Logger } from '../log.js';
import { isRequestId } from '../protocol/ids.js';
import { describeReasonCode, NO_MATCHING_SUBSCRIBERS } from '../protocol/mqtt-reason-codes.js';
import { filters, parseTopic, topics } from '../protocol/topics.js';
import { invocationTraceparent } from '../protocol/trace-context.js';
import type { PluginResult } from '../protocol/types.js';
import { parseJsonPayload, validatePayload } from '../protocol/validate.js';
import { whenAborted, type AdapterCall, type PluginAdapter } from './adapter.js';
import { mqttRequestPayload } from './mqtt-request.js';
import { errorMessage } from '../kit/error-message.js';
import { formatIssues } from '../kit/format-issues.js';
import { RecentIds } from '../kit/recent-ids.js';

interface Pending {
  plugin_id: string;
  owner: string;
  resolve: (result: PluginResult) => void;
}

export interface MqttAdapterDeps {
  bus: CoreBus;
  log: Logger;
  max_payload_bytes: number;
  /** Called for progress events, e.g. to forward them to dashboards. */
  onProgress?: (result: PluginResult) => void;
}

/** How many finished request ids are remembered to tell a duplicate or late result from an unknown one. */
const RECENT_LIMIT = 10_000;

export class MqttAdapter implements PluginAdapter {
  readonly type = 'mqtt' as const;
  private readonly pending = new Map<string, Pending>();
  private readonly recent = new RecentIds(RECENT_LIMIT);
  private unsubscribe: (() => Promise<void>) | undefined;
  private stopWatchingConnection: (() => void) | undefined;
  readonly counters = { dropped_unknown: 0, dropped_late: 0, rejected_foreign: 0, invalid: 0 };

  constructor(private readonly deps: MqttAdapterDeps) {}

  async start(): Promise<void> {
    this.unsubscribe = await this.deps.bus.subscribe(filters.result, (message) => this.onResult(message));
    // Results of requests sent on a session that is gone will never arrive: end those calls now.
    this.stopWatchingConnection = this.deps.bus.onConnectionLost?.((reason) => this.failPending(`broker connection lost (${reason})`));
  }

  async invoke(call: AdapterCall): Promise<PluginResult> {
    const { request, record } = call;
    const payload = mqttRequestPayload(request, call.capability);
    const limit = this.deps.max_payload_bytes;
    // A UTF-8 byte is at most 3 per UTF-16 unit: only a payload that could be too large is measured.
    if (payload.length * 3 > limit) {
      const bytes = Buffer.byteLength(payload);
      if (bytes > limit) {
        return {
          request_id: request.request_id,
          plugin_id: record.descriptor.id,
          success: false,
          error: `request to plugin ${record.descriptor.id} is ${bytes} bytes, more than the broker payload limit of ${limit} bytes (broker.max_payload_bytes); nothing was sent`,
          error_code: 'invalid_params',
        };
      }
    }
    const result = new Promise<PluginResult>((resolve) => {
      this.pending.set(request.request_id, { plugin_id: record.descriptor.id, owner: record.owner, resolve });
      whenAborted(call, () => {
        // The dispatcher has already answered the caller; forget the request so a late result is dropped.
        if (this.pending.delete(request.request_id)) this.recent.add(request.request_id);
      });
    });
    const topic = topics.invoke(record.descriptor.id);
    const bus = this.deps.bus;
    try {
      if (bus.protocolVersion === 5 && bus.publishWithReceipt) {
        const receipt = await bus.publishWithReceipt(topic, payload, {
          qos: 1,
          // Whole seconds, rounded up: the broker may keep it up to a second past the deadline, never less.
          expirySec: Math.max(1, Math.ceil((request.deadline - Date.now()) / 1000)),
          userProperties: { traceparent: invocationTraceparent(request.request_id, call.traceparent) },
        });
        if (receipt.noSubscribers) return this.endUnsent(call, result, noSubscriber(record.descriptor.id, topic));
      } else {
        await bus.publish(topic, payload, { qos: 1 });
      }
    } catch (err) {
      const message = errorMessage(err);
      if (err instanceof PacketTooLargeError)
        return this.endUnsent(call, result, { error: `request to plugin ${record.descriptor.id}: ${message}`, error_code: 'invalid_params' });
      return this.endUnsent(call, result, { error: `could not send the request to plugin ${record.descriptor.id}: ${message}`, error_code: 'adapter_error' });
    }
    return result;
  }

  /** A call whose request did not reach the plugin ends with this failure (unless something ended it first). */
  private endUnsent(
    call: AdapterCall,
    result: Promise<PluginResult>,
    failure: Pick<PluginResult, 'error' | 'error_code'>,
  ): Promise<PluginResult> | PluginResult {
    const { request_id } = call.request;
    // Unless the connection-lost handler already answered it, the call ends with this failure.
    if (!this.pending.delete(request_id)) return result;
    this.recent.add(request_id);
    return { request_id, plugin_id: call.record.descriptor.id, success: false, ...failure };
  }

  private failPending(reason: string): void {
    if (this.pending.size === 0) return;
    this.deps.log.warn({ calls: this.pending.size, reason }, 'failing in-flight MQTT calls');
    for (const [requestId, pending] of [...this.pending]) {
      this.settle(requestId, pending, {
        request_id: requestId,
        plugin_id: pending.plugin_id,
        success: false,
        error: `${reason}: the call to plugin ${pending.plugin_id} cannot be answered`,
        error_code: 'adapter_error',
      });
    }
  }

  private onResult(message: IncomingMessage): void {
    const log = this.deps.log;
    const requestId = parseTopic(message.topic)?.param;
    if (!isRequestId(requestId)) {
      this.counters.invalid++;
      log.warn({ topic: message.topic }, 'result on a topic without a valid request id dropped');
      return;
    }
    const pending = this.pending.get(requestId);
    if (!pending) {
      if (this.recent.has(requestId)) {
        this.counters.dropped_late++;
        log.info({ request_id: requestId }, 'duplicate or late result dropped');
      } else {
        this.counters.dropped_unknown++;
        log.warn({ request_id: requestId, client: message.publisher?.clientId }, 'result for an unknown request dropped');
      }
      return;
    }
    // With the embedded broker the Core knows who published: only the owner of the invoked plugin may answer.
    if (message.publisher && ownerOf(message.publisher) !== pending.owner) {
      this.counters.rejected_foreign++;
      log.warn(
        { request_id: requestId, plugin_id: pending.plugin_id, client: message.publisher.clientId },
        'result from a client that does not own the plugin rejected',
      );
      return;
    }
    const parsed = parseJsonPayload(message.payload, this.deps.max_payload_bytes);
    if (!parsed.ok) {
      this.settle(requestId, pending, {
        request_id: requestId,
        plugin_id: pending.plugin_id,
        success: false,
        error: `plugin sent an unreadable result: ${parsed.errors.map((e) => e.message).join('; ')}`,
        error_code: 'plugin_error',
      });
      return;
    }
    const valid = validatePayload('result', { request_id: requestId, plugin_id: pending.plugin_id, ...parsed.value });
    if (!valid.ok) {
      this.settle(requestId, pending, {
        request_id: requestId,
        plugin_id: pending.plugin_id,
        success: false,
        error: `plugin sent an invalid result: ${formatIssues(valid.errors)}`,
        error_code: 'plugin_error',
      });
      return;
    }
    if (valid.value.progress === true) {
      this.deps.onProgress?.(valid.value);
      return;
    }
    const result = valid.value;
    this.settle(requestId, pending, result.success ? result : { ...result, error_code: 'plugin_error' });
  }

  private settle(requestId: string, pending: Pending, result: PluginResult): void {
    this.pending.delete(requestId);
    this.recent.add(requestId);
    pending.resolve(result);
  }

  async stop(): Promise<void> {
    this.stopWatchingConnection?.();
    await this.unsubscribe?.();
  }
}

/** The broker delivered the request to nobody (MQTT 5 PUBACK reason 0x10): the plugin is not connected. */
function noSubscriber(pluginId: string, topic: string): Pick<PluginResult, 'error' | 'error_code'> {
  return {
    error: `plugin ${pluginId} is not connected: no client subscribes to ${topic} (the broker answered ${describeReasonCode(NO_MATCHING_SUBSCRIBERS)})`,
    error_code: 'offline',
  };
}
