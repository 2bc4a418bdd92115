// The Core as a client of an existing broker (Mosquitto, Home Assistant's broker). The broker cannot tell
// the Core who published a message, so `publisher` is always undefined here; the broker's ACL must give
// the guarantees the embedded ACL gives (docs/external-broker-acl.md).
import { randomBytes } from 'node:crypto';
import { Socket } from 'node:net';
import { connect, type IClientOptions, type MqttClient, type IPublishPacket } from 'mqtt';
import type { Logger } from '../log.js';
import { isCommandTopic, topicMatches, topics } from '../protocol/topics.js';
import type { CoreBus, IncomingMessage, MessageHandler, PublishOptions } from './core-bus.js';

export interface ExternalBusOptions {
  url: string;
  username?: string | null;
  password?: string | null;
  log: Logger;
  /** Payload of the retained will on the Core status topic, computed at every (re)connect: {online:false, ts}. */
  willPayload: () => string;
  /**
   * Payload of the retained birth on the Core status topic, published after every (re)connect so that a
   * will fired during an outage is overwritten: {online:true, ts}. Omit to publish the birth yourself.
   */
  birthPayload?: () => string;
  clientId?: string;
  /** First reconnect delay; doubles per failed attempt up to maxReconnectDelayMs. */
  reconnectDelayMs?: number;
  maxReconnectDelayMs?: number;
  /** How long connect() waits for the first CONNACK before giving up. */
  connectTimeoutMs?: number;
  keepaliveSec?: number;
}

interface FilterEntry {
  handlers: Set<MessageHandler>;
  qos: 0 | 1;
}

export class ExternalBus implements CoreBus {
  readonly embedded = false;
  private readonly client: MqttClient;
  private readonly log: Logger;
  private readonly options: ExternalBusOptions;
  private readonly filters = new Map<string, FilterEntry>();
  private reconnectTimer: NodeJS.Timeout | undefined;
  private failedAttempts = 0;
  private connectedOnce = false;
  private closing = false;
  /** Rejecters of publishes awaiting their PUBACK, failed when the connection drops. */
  private readonly inFlight = new Set<(error: Error) => void>();
  /** Command topics whose retained message the Core just cleared: the broker echoes the empty message once. */
  private readonly clearing = new Set<string>();
  /** Told when a session with the broker that was up drops. */
  private readonly connectionLostListeners = new Set<(reason: string) => void>();
  private sessionUp = false;
  /** Command topics already reported as retained, so a topic is logged once, not at every reconnect. */
  private readonly reportedRetained = new Set<string>();

  /** Connects and resolves after the first CONNACK; rejects (and stops retrying) on timeout or refusal. */
  static async connect(options: ExternalBusOptions): Promise<ExternalBus> {
    const bus = new ExternalBus(options);
    try {
      await bus.firstConnection(options.connectTimeoutMs ?? 15_000);
    } catch (error) {
      await bus.close();
      throw error;
    }
    return bus;
  }

  private constructor(options: ExternalBusOptions) {
    this.options = options;
    this.log = options.log.child({ component: 'external-bus' });
    const clientOptions: IClientOptions = {
      protocolVersion: 4,
      clientId: options.clientId ?? `homeclaw-core-${randomBytes(6).toString('hex')}`,
      clean: true,
      keepalive: options.keepaliveSec ?? 30,
      // Reconnection is ours (with backoff); mqtt.js only knows a fixed period.
      reconnectPeriod: 0,
      resubscribe: false,
      connectTimeout: options.connectTimeoutMs ?? 15_000,
      will: { topic: topics.coreStatus(), payload: Buffer.from(options.willPayload()), qos: 1, retain: true },
    };
    if (options.username) clientOptions.username = options.username;
    if (options.password) clientOptions.password = options.password;
    this.client = connect(options.url, clientOptions);
    this.client.on('connect', this.onConnect);
    this.client.on('close', this.onClose);
    this.client.on('message', this.onMessage);
    this.client.on('packetreceive', this.coalesceWrites);
    this.client.on('packetsend', this.coalesceWrites);
    this.client.on('error', (error) => this.log.warn({ err: error.message, url: redactUrl(options.url) }, 'broker connection error'));
  }

  publish(topic: string, payload: string | Buffer, options: PublishOptions = {}): Promise<void> {
    // Failing fast beats queueing: an invoke published minutes late, after a reconnect, would arrive past
    // its deadline, while the dispatcher can answer a failed publish at once.
    if (!this.client.connected) return Promise.reject(new Error('not connected to the external MQTT broker'));
    return new Promise((resolve, reject) => {
      this.inFlight.add(reject);
      this.client.publish(topic, payload, { qos: options.qos ?? 1, retain: options.retain ?? false }, (error) => {
        this.inFlight.delete(reject);
        if (error) reject(error);
        else resolve();
      });
    });
  }

  async subscribe(filter: string, handler: MessageHandler): Promise<() => Promise<void>> {
    if (this.closing) throw new Error('bus is closed');
    let entry = this.filters.get(filter);
    if (!entry) {
      entry = { handlers: new Set(), qos: 1 };
      this.filters.set(filter, entry);
      entry.handlers.add(handler);
      // While disconnected the filter is only recorded: onConnect subscribes every recorded filter.
      if (this.client.connected) {
        try {
          await this.subscribeOnBroker(filter, entry.qos);
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

  /** The external broker does not tell its clients about other clients' disconnects; wills carry that. */
  onClientDisconnect(_listener: (clientId: string, subscriptions: readonly string[]) => void): () => void {
    return () => undefined;
  }

  onConnectionLost(listener: (reason: string) => void): () => void {
    this.connectionLostListeners.add(listener);
    return () => this.connectionLostListeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearTimeout(this.reconnectTimer);
    // A clean DISCONNECT: the broker discards the will, so the integrator publishes the offline status
    // itself before closing when it wants one.
    await new Promise<void>((resolve) => this.client.end(false, {}, () => resolve()));
    this.filters.clear();
  }

  /** True while an MQTT session with the broker is up. */
  get connected(): boolean {
    return this.client.connected;
  }

  private firstConnection(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`external MQTT broker ${redactUrl(this.options.url)} did not accept a connection within ${timeoutMs} ms`));
      }, timeoutMs);
      const onConnect = (): void => {
        cleanup();
        resolve();
      };
      const onError = (error: Error & { code?: unknown }): void => {
        // A CONNACK refusal (bad credentials, not authorised) will not improve by retrying.
        if (typeof error.code === 'number') {
          cleanup();
          reject(new Error(`external MQTT broker ${redactUrl(this.options.url)} refused the connection: ${error.message}`));
        }
      };
      const cleanup = (): void => {
        clearTimeout(timer);
        this.client.off('connect', onConnect);
        this.client.off('error', onError);
      };
      this.client.on('connect', onConnect);
      this.client.on('error', onError);
    });
  }

  private readonly onConnect = (): void => {
    const stream: unknown = this.client.stream;
    // Request/response over QoS 1 stalls ~40 ms per hop on Nagle + delayed ACK without this.
    if (stream instanceof Socket) stream.setNoDelay(true);
    const reconnect = this.connectedOnce;
    this.connectedOnce = true;
    this.sessionUp = true;
    this.failedAttempts = 0;
    this.log.info({ url: redactUrl(this.options.url), reconnect }, 'connected to external broker');
    // With a clean session the broker forgot every subscription: make them again.
    for (const [filter, entry] of this.filters) {
      this.subscribeOnBroker(filter, entry.qos).catch((error: unknown) => {
        this.log.error({ err: error, filter }, 'resubscribe failed');
      });
    }
    if (this.options.birthPayload) {
      this.client.publish(topics.coreStatus(), this.options.birthPayload(), { qos: 1, retain: true }, (error) => {
        if (error) this.log.warn({ err: error.message }, 'core birth publish failed');
      });
    }
  };

  private readonly onClose = (): void => {
    // mqtt.js would resend these on a resumed session; with a clean one they are lost, so say so now.
    const lost = new Error('connection to the external MQTT broker lost before the publish was acknowledged');
    for (const reject of this.inFlight) reject(lost);
    this.inFlight.clear();
    if (this.sessionUp) {
      this.sessionUp = false;
      const reason = this.closing ? 'the Core is closing its broker connection' : `the connection to ${redactUrl(this.options.url)} closed`;
      for (const listener of this.connectionLostListeners) {
        try {
          listener(reason);
        } catch (error) {
          this.log.error({ err: error }, 'connection-lost listener failed');
        }
      }
    }
    if (this.closing || this.reconnectTimer) return;
    const base = this.options.reconnectDelayMs ?? 250;
    const max = this.options.maxReconnectDelayMs ?? 10_000;
    const delay = Math.min(max, base * 2 ** Math.min(this.failedAttempts, 16));
    // Jitter spreads the reconnects of several Cores or plugins after a broker restart.
    const jittered = Math.round(delay * (0.8 + Math.random() * 0.4));
    this.failedAttempts += 1;
    this.log.warn({ delayMs: jittered, attempt: this.failedAttempts }, 'broker connection lost; reconnecting');
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.closing) return;
      // The will carries the time of the connection it belongs to.
      if (this.client.options.will) this.client.options.will.payload = Buffer.from(this.options.willPayload());
      this.client.reconnect();
    }, jittered);
  };

  private readonly onMessage = (topic: string, payload: Buffer, packet: IPublishPacket): void => {
    if (packet.retain && isCommandTopic(topic)) return this.clearRetainedCommand(topic, payload);
    if (payload.length === 0 && this.clearing.size > 0 && this.clearing.delete(topic)) return;
    const message: IncomingMessage = { topic, payload, publisher: undefined, retain: packet.retain };
    for (const [filter, entry] of this.filters) {
      if (!topicMatches(filter, topic)) continue;
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
  };

  /**
   * A retained command was stored by the broker and is being replayed: it was acted on when it was sent,
   * so it is ignored and removed (an empty retained message deletes it) so that no later subscription
   * replays it again.
   */
  private clearRetainedCommand(topic: string, payload: Buffer): void {
    if (payload.length === 0) return;
    if (this.reportedRetained.size >= MAX_TRACKED_TOPICS) this.reportedRetained.clear();
    if (!this.reportedRetained.has(topic)) {
      this.reportedRetained.add(topic);
      this.log.warn({ topic, bytes: payload.length }, 'retained command ignored and cleared: commands are acted on only when sent');
    }
    if (this.clearing.size >= MAX_TRACKED_TOPICS) this.clearing.clear();
    this.clearing.add(topic);
    this.client.publish(topic, '', { qos: 1, retain: true }, (error) => {
      if (error) {
        this.clearing.delete(topic);
        this.log.warn({ topic, err: error.message }, 'could not clear a retained command (check the broker ACL)');
      }
    });
  }

  /**
   * Packets written during one turn of the event loop leave in one write: the PUBACK of a result and the
   * next invoke, or many invokes and acks under load, instead of one write system call each (which on
   * loopback also wakes the broker). The socket is corked when a packet arrives or is sent and uncorked
   * in the check phase of the same turn, so no packet waits longer than the turn it was written in.
   */
  private corked: { uncork(): void } | undefined;
  private readonly coalesceWrites = (): void => {
    if (this.corked) return;
    const stream = this.client.stream as { cork?: () => void; uncork?: () => void; destroyed?: boolean } | undefined;
    if (!stream || typeof stream.cork !== 'function' || typeof stream.uncork !== 'function' || stream.destroyed) return;
    stream.cork();
    this.corked = stream as { uncork(): void };
    setImmediate(this.uncorkWrites);
  };
  private readonly uncorkWrites = (): void => {
    const stream = this.corked;
    this.corked = undefined;
    stream?.uncork();
  };

  private async subscribeOnBroker(filter: string, qos: 0 | 1): Promise<void> {
    const granted = await this.client.subscribeAsync(filter, { qos });
    const refused = granted.find((grant) => grant.qos === 128);
    if (refused) throw new Error(`external MQTT broker refused the subscription to ${filter} (check its ACL)`);
  }
}

/** Bound on the per-topic bookkeeping of retained commands, which a client could otherwise grow at will. */
const MAX_TRACKED_TOPICS = 1_000;

/** Broker URLs may carry user:password; never log those. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable url)';
  }
}
