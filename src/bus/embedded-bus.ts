// The Core's publish/subscribe on the embedded broker: no socket in between. Subscriptions read the
// broker's publish stream, so every message carries the identity of the client that published it.
import type { AedesPublishPacket, Client } from 'aedes';
import type { Logger } from '../log.js';
import { topicMatches } from '../protocol/topics.js';
import type { EmbeddedBrokerHandle } from './broker.js';
import { emptyTraffic, type CoreBus, type IncomingMessage, type MessageHandler, type PublishOptions, type PublisherIdentity } from './core-bus.js';

interface Subscription {
  filter: string;
  handler: MessageHandler;
}

/** The part of Aedes' persistence that lists retained messages (untyped in Aedes' own types). */
interface RetainedStore {
  createRetainedStream(pattern: string): AsyncIterable<{ topic: string; payload: Buffer | string }>;
}

export interface EmbeddedBusOptions {
  broker: EmbeddedBrokerHandle;
  log: Logger;
}

export class EmbeddedBus implements CoreBus {
  readonly embedded = true;
  readonly traffic = emptyTraffic();
  private readonly broker: EmbeddedBrokerHandle;
  private readonly log: Logger;
  private readonly subscriptions = new Set<Subscription>();
  private readonly disconnectListeners = new Set<(clientId: string, subscriptions: readonly string[]) => void>();
  /** What connected clients subscribe to, so optional traffic (the event feed) is skipped when nobody listens. */
  private readonly clientFilters = new Map<string, Set<string>>();
  private closed = false;

  constructor(options: EmbeddedBusOptions) {
    this.broker = options.broker;
    this.log = options.log.child({ component: 'embedded-bus' });
    this.broker.aedes.on('publish', this.onPublish);
    this.broker.aedes.on('clientDisconnect', this.onDisconnect);
    this.broker.aedes.on('subscribe', this.onClientSubscribe);
    this.broker.aedes.on('unsubscribe', this.onClientUnsubscribe);
  }

  hasSubscribers(topic: string, countsFilter?: (filter: string) => boolean): boolean {
    for (const subscription of this.subscriptions) {
      if (topicMatches(subscription.filter, topic) && (!countsFilter || countsFilter(subscription.filter))) return true;
    }
    for (const filters of this.clientFilters.values()) {
      for (const filter of filters) if (topicMatches(filter, topic) && (!countsFilter || countsFilter(filter))) return true;
    }
    return false;
  }

  private readonly onClientSubscribe = (subscriptions: { topic: string; qos: number }[], client: Client): void => {
    let filters = this.clientFilters.get(client.id);
    if (!filters) {
      filters = new Set();
      this.clientFilters.set(client.id, filters);
    }
    // 128 is a subscription the ACL refused: the client receives nothing on it.
    for (const { topic, qos } of subscriptions) if (qos !== 128) filters.add(topic);
  };

  private readonly onClientUnsubscribe = (unsubscriptions: string[], client: Client): void => {
    const filters = this.clientFilters.get(client.id);
    for (const topic of unsubscriptions) filters?.delete(topic);
  };

  publish(topic: string, payload: string | Buffer, options: PublishOptions = {}): Promise<void> {
    if (this.closed) return Promise.reject(new Error('bus is closed'));
    // A restricted message needs a buffer of its own: the broker recognises it by identity.
    const bytes = typeof payload === 'string' ? Buffer.from(payload) : options.onlyTo ? Buffer.from(payload) : payload;
    if (options.onlyTo) this.broker.deliverOnlyTo(bytes, options.onlyTo);
    this.traffic.published++;
    this.traffic.published_bytes += bytes.length;
    return new Promise((resolve, reject) => {
      this.broker.aedes.publish(
        {
          cmd: 'publish',
          topic,
          payload: bytes,
          qos: options.qos ?? 1,
          retain: options.retain ?? false,
          dup: false,
        },
        (error) => (error ? reject(error) : resolve()),
      );
    });
  }

  async subscribe(filter: string, handler: MessageHandler): Promise<() => Promise<void>> {
    if (this.closed) throw new Error('bus is closed');
    const subscription: Subscription = { filter, handler };
    this.subscriptions.add(subscription);
    return async () => {
      this.subscriptions.delete(subscription);
    };
  }

  async readRetained(filter: string): Promise<IncomingMessage[]> {
    if (this.closed) throw new Error('bus is closed');
    const messages: IncomingMessage[] = [];
    // The memory persistence yields the stored packets; the retained flag marks them as a replay.
    const stream = (this.broker.aedes as unknown as { persistence: RetainedStore }).persistence.createRetainedStream(filter);
    for await (const packet of stream) {
      const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
      messages.push({ topic: packet.topic, payload, retain: true });
    }
    return messages;
  }

  onClientDisconnect(listener: (clientId: string, subscriptions: readonly string[]) => void): () => void {
    this.disconnectListeners.add(listener);
    return () => this.disconnectListeners.delete(listener);
  }

  /** Detaches from the broker; the broker itself is closed by its owner (see createBus). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.broker.aedes.off('publish', this.onPublish);
    this.broker.aedes.off('clientDisconnect', this.onDisconnect);
    this.broker.aedes.off('subscribe', this.onClientSubscribe);
    this.broker.aedes.off('unsubscribe', this.onClientUnsubscribe);
    this.subscriptions.clear();
    this.disconnectListeners.clear();
  }

  private readonly onPublish = (packet: AedesPublishPacket, client: Client | null): void => {
    // $SYS is the broker's own chatter; dropped packets were refused by the ACL or the size cap.
    if (packet.topic.startsWith('$') || this.broker.isDropped(packet)) return;
    let message: IncomingMessage | undefined;
    for (const subscription of this.subscriptions) {
      if (!topicMatches(subscription.filter, packet.topic)) continue;
      message ??= {
        topic: packet.topic,
        payload: Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload),
        publisher: client ? this.publisherOf(client) : undefined,
        // A live message, never a retained replay: the same flag a subscribed MQTT 3.1.1 client would see.
        retain: false,
      };
      this.deliver(subscription, message);
    }
    if (message) {
      this.traffic.received++;
      this.traffic.received_bytes += message.payload.length;
    }
  };

  private deliver(subscription: Subscription, message: IncomingMessage): void {
    try {
      const returned: unknown = subscription.handler(message);
      if (returned instanceof Promise) {
        returned.catch((error: unknown) => this.logHandlerFailure(subscription, message, error));
      }
    } catch (error) {
      this.logHandlerFailure(subscription, message, error);
    }
  }

  private logHandlerFailure(subscription: Subscription, message: IncomingMessage, error: unknown): void {
    this.log.error({ err: error, filter: subscription.filter, topic: message.topic }, 'bus handler failed');
  }

  private publisherOf(client: Client): PublisherIdentity {
    const identity = this.broker.identityOf(client);
    return {
      clientId: client.id,
      username: identity?.username,
      role: identity?.role,
      pluginIds: identity?.role === 'plugin' ? [...identity.pluginIds] : undefined,
      channels: identity?.role === 'channel' ? [...identity.channels] : undefined,
      users: (identity?.role === 'channel' || identity?.role === 'caller') && identity.users ? [...identity.users] : undefined,
    };
  }

  private readonly onDisconnect = (client: Client): void => {
    const subscriptions = [...(this.clientFilters.get(client.id) ?? [])];
    // Removed before the listeners run, so hasSubscribers() tells them who is still listening.
    this.clientFilters.delete(client.id);
    for (const listener of this.disconnectListeners) {
      try {
        listener(client.id, subscriptions);
      } catch (error) {
        this.log.error({ err: error, clientId: client.id }, 'client-disconnect listener failed');
      }
    }
  };
}
