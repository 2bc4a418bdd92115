// The Core's subscriptions on an external broker: each topic filter with its handlers, made on the
// broker once (and again after every reconnect, since the session is clean), and every incoming message
// handed to the handlers of the filters it was sent for. A handler that throws is logged; the others run.
import type { IClientSubscribeOptions, MqttClient } from 'mqtt';
import type { Logger } from '../log.js';
import { describeReasonCode } from '../protocol/mqtt-reason-codes.js';
import { topicMatches } from '../protocol/topics.js';
import type { IncomingMessage, MessageHandler } from './core-bus.js';
import type { ReasonLog } from './mqtt5-session.js';

interface FilterEntry {
  handlers: Set<MessageHandler>;
  qos: 0 | 1;
  /**
   * MQTT 5 Subscription Identifier of this filter. An MQTT 5 broker (Mosquitto) delivers a message once
   * per matching subscription, each copy tagged with its subscription's identifier, so a copy is handed
   * only to the handlers of the filter it was sent for; otherwise a message matching two of the Core's
   * filters would be handled twice by each.
   */
  id: number;
}

/** Subscription Identifiers run from 1 to 268,435,455 (a variable byte integer). */
const MAX_SUBSCRIPTION_ID = 268_435_455;

export class ExternalSubscriptions {
  private readonly filters = new Map<string, FilterEntry>();
  private lastSubscriptionId = 0;
  /** False when the broker's CONNACK says it does not support Subscription Identifiers. */
  idsAvailable = true;

  constructor(
    private readonly client: MqttClient,
    private readonly log: Logger,
    private readonly reasons: ReasonLog,
  ) {}

  /** Adds a handler for a filter; resolves once the broker granted a new filter (when connected). */
  async add(filter: string, handler: MessageHandler): Promise<() => Promise<void>> {
    let entry = this.filters.get(filter);
    if (!entry) {
      entry = { handlers: new Set(), qos: 1, id: this.nextSubscriptionId() };
      this.filters.set(filter, entry);
      entry.handlers.add(handler);
      // While disconnected the filter is only recorded: resubscribeAll() makes it on the next connect.
      if (this.client.connected) {
        try {
          await this.subscribeOnBroker(filter, entry);
        } catch (error) {
          entry.handlers.delete(handler);
          if (entry.handlers.size === 0) this.filters.delete(filter);
          throw error;
        }
      }
    } else {
      entry.handlers.add(handler);
    }
    const subscribed = entry;
    return async () => {
      subscribed.handlers.delete(handler);
      if (subscribed.handlers.size > 0 || this.filters.get(filter) !== subscribed) return;
      this.filters.delete(filter);
      if (this.client.connected) {
        await this.client.unsubscribeAsync(filter).catch((error: unknown) => {
          this.log.warn({ err: error, filter }, 'unsubscribe failed');
        });
      }
    };
  }

  /** With a clean session the broker forgot every subscription: make them again. */
  resubscribeAll(): void {
    for (const [filter, entry] of this.filters) {
      this.subscribeOnBroker(filter, entry).catch((error: unknown) => {
        this.log.error({ err: error, filter }, 'resubscribe failed');
      });
    }
  }

  clear(): void {
    this.filters.clear();
  }

  /** Hands a message to the handlers of the filters it was sent for (by identifier, else by matching). */
  deliver(message: IncomingMessage, subscriptionIdentifier: number | number[] | undefined): void {
    const { topic } = message;
    const sentFor = subscriptionIds(subscriptionIdentifier);
    for (const [filter, entry] of this.filters) {
      if (sentFor ? !sentFor.includes(entry.id) : !topicMatches(filter, topic)) continue;
      for (const handler of entry.handlers) {
        try {
          const returned: unknown = handler(message);
          if (returned instanceof Promise) {
            returned.catch((error: unknown) => this.log.error({ err: error, filter, topic }, 'bus handler failed'));
          }
        } catch (error) {
          this.log.error({ err: error, filter, topic }, 'bus handler failed');
        }
      }
    }
  }

  private nextSubscriptionId(): number {
    this.lastSubscriptionId = this.lastSubscriptionId >= MAX_SUBSCRIPTION_ID ? 1 : this.lastSubscriptionId + 1;
    return this.lastSubscriptionId;
  }

  private async subscribeOnBroker(filter: string, entry: FilterEntry): Promise<void> {
    let refusedCode: number | undefined;
    const options: IClientSubscribeOptions = { qos: entry.qos };
    if (this.client.options.protocolVersion === 5 && this.idsAvailable) options.properties = { subscriptionIdentifier: entry.id };
    try {
      const granted = await this.client.subscribeAsync(filter, options);
      refusedCode = granted.find((grant) => grant.qos >= 0x80)?.qos;
    } catch (error) {
      // mqtt.js rejects a refusal with the SUBACK attached: its reason codes (MQTT 5) or 0x80 (3.1.1).
      const granted = (error as { packet?: { granted?: unknown } }).packet?.granted;
      const code = Array.isArray(granted) ? granted.find((grant): grant is number => typeof grant === 'number' && grant >= 0x80) : undefined;
      if (code === undefined) throw error;
      refusedCode = code;
    }
    if (refusedCode === undefined) return;
    this.reasons.refused('subscribe', refusedCode, { filter });
    throw new Error(`external MQTT broker refused the subscription to ${filter}: ${describeReasonCode(refusedCode)} (check its ACL)`);
  }
}

/** The Subscription Identifiers a message was sent for (one or several), or undefined when it carries none. */
function subscriptionIds(value: number | number[] | undefined): readonly number[] | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value : [value];
}
