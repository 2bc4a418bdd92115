// The Core as a client of an existing broker (Mosquitto, Home Assistant's broker). The broker cannot tell
// the Core who published a message, so `publisher` is always undefined here; the broker's ACL must give
// the guarantees the embedded ACL gives (docs/external-broker-acl.md).
import { randomBytes } from 'node:crypto';
import { Socket } from 'node:net';
import { Writable } from 'node:stream';
import {
  connect,
  type IClientOptions,
  type IClientPublishOptions,
  type IConnackPacket,
  type IDisconnectPacket,
  type MqttClient,
  type IPublishPacket,
  type Packet,
} from 'mqtt';
import type { Logger } from '../log.js';
import { describeReasonCode, isProtocolVersionRefusal, NO_MATCHING_SUBSCRIBERS } from '../protocol/mqtt-reason-codes.js';
import { isCommandTopic, topics } from '../protocol/topics.js';
import { emptyTraffic, type CoreBus, type IncomingMessage, type MessageHandler, type PublishOptions, type PublishReceipt } from './core-bus.js';
import { DELIVERED, messageProperties, NO_SUBSCRIBERS, oversize, publishProperties, ReasonLog } from './mqtt5-session.js';
import { RetainedCommandCleaner } from './retained-commands.js';
import { collectWrites } from './write-collector.js';
import { ExternalSubscriptions } from './external-subscriptions.js';
import { redactUrl } from '../kit/redact-url.js';

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
  /**
   * MQTT version to speak: 5 (default) or 4 (3.1.1). A broker that refuses 5 in its CONNACK (3.1.1 brokers
   * answer "unacceptable protocol version") is connected to again with 3.1.1, and that is logged once.
   */
  protocolVersion?: 4 | 5;
}

export class ExternalBus implements CoreBus {
  readonly embedded = false;
  readonly traffic = emptyTraffic();
  private readonly client: MqttClient;
  private readonly log: Logger;
  private readonly options: ExternalBusOptions;
  private readonly subscriptions: ExternalSubscriptions;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private failedAttempts = 0;
  private connectedOnce = false;
  private closing = false;
  /** Rejecters of publishes awaiting their PUBACK, failed when the connection drops. */
  private readonly inFlight = new Set<(error: Error) => void>();
  /** Told when a session with the broker that was up drops. */
  private readonly connectionLostListeners = new Set<(reason: string) => void>();
  private sessionUp = false;
  private readonly retainedCommands: RetainedCommandCleaner;
  private readonly reasons: ReasonLog;
  /** The CONNACK's Maximum Packet Size of the current MQTT 5 session, if the broker announced one. */
  private maxPacketBytes: number | undefined;
  /** Reason code of the PUBACK being handled; read by its publish callback, which runs in the same call. */
  private pubackReason: number | undefined;
  /** Why the broker last disconnected the Core (an MQTT 5 DISCONNECT), for the connection-lost reason. */
  private disconnectReason: string | undefined;

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
    this.reasons = new ReasonLog(this.log);
    this.retainedCommands = new RetainedCommandCleaner(this.log, (topic, done) =>
      this.client.publish(topic, '', { qos: 1, retain: true }, (error) => done(error)),
    );
    const clientOptions: IClientOptions = {
      protocolVersion: options.protocolVersion ?? 5,
      clientId: options.clientId ?? `homeclaw-core-${randomBytes(6).toString('hex')}`,
      clean: true,
      keepalive: options.keepaliveSec ?? 30,
      // Reconnection is ours (with backoff); mqtt.js only knows a fixed period.
      reconnectPeriod: 0,
      resubscribe: false,
      connectTimeout: options.connectTimeoutMs ?? 15_000,
      will: { topic: topics.coreStatus(), payload: Buffer.from(options.willPayload()), qos: 1, retain: true },
      // mqtt.js traces every step of every packet through `debug`; a no-op costs nothing per call. With
      // DEBUG set (e.g. DEBUG=mqttjs*) its tracing stays on for troubleshooting.
      ...(process.env.DEBUG ? {} : { log: noTrace }),
    };
    if (options.username) clientOptions.username = options.username;
    if (options.password) clientOptions.password = options.password;
    this.client = connect(options.url, clientOptions);
    this.subscriptions = new ExternalSubscriptions(this.client, this.log, this.reasons);
    this.client.on('connect', this.onConnect);
    this.client.on('close', this.onClose);
    this.client.on('message', this.onMessage);
    this.client.on('packetreceive', this.onPacketReceive);
    this.client.on('disconnect', this.onDisconnectPacket);
    this.client.on('error', this.onError);
  }

  /** The MQTT version of the current (or last) session: 5, or 4 (3.1.1) when the broker refused 5. */
  get protocolVersion(): 4 | 5 {
    return this.client.options.protocolVersion === 5 ? 5 : 4;
  }

  publish(topic: string, payload: string | Buffer, options: PublishOptions = {}): Promise<void> {
    return new Promise((resolve, reject) => this.send(topic, payload, options, () => resolve(), reject));
  }

  publishWithReceipt(topic: string, payload: string | Buffer, options: PublishOptions = {}): Promise<PublishReceipt> {
    return new Promise((resolve, reject) => this.send(topic, payload, options, resolve, reject));
  }

  private send(
    topic: string,
    payload: string | Buffer,
    options: PublishOptions,
    resolve: (receipt: PublishReceipt) => void,
    reject: (error: Error) => void,
  ): void {
    // Failing fast beats queueing: an invoke published minutes late, after a reconnect, would arrive past
    // its deadline, while the dispatcher can answer a failed publish at once.
    if (!this.client.connected) return reject(new Error('not connected to the external MQTT broker'));
    const qos = options.qos ?? 1;
    const publishOptions: IClientPublishOptions = { qos, retain: options.retain ?? false };
    if (this.client.options.protocolVersion === 5) {
      const properties = publishProperties(options);
      if (properties) publishOptions.properties = properties;
      const tooLarge = oversize(topic, payload, qos, options, this.maxPacketBytes);
      if (tooLarge) return reject(tooLarge);
    }
    this.traffic.published++;
    this.traffic.published_bytes += typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
    this.inFlight.add(reject);
    this.client.publish(topic, payload, publishOptions, (error) => {
      this.inFlight.delete(reject);
      // A QoS 0 callback runs when the packet is written: there is no PUBACK, so no reason to read.
      const reason = qos === 1 ? this.pubackReason : undefined;
      this.pubackReason = undefined;
      if (error) reject(this.publishRefusal(topic, error));
      else resolve(reason === NO_MATCHING_SUBSCRIBERS ? NO_SUBSCRIBERS : DELIVERED);
    });
  }

  async subscribe(filter: string, handler: MessageHandler): Promise<() => Promise<void>> {
    if (this.closing) throw new Error('bus is closed');
    return this.subscriptions.add(filter, handler);
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
    this.subscriptions.clear();
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
        // A CONNACK refusal (bad credentials, not authorised) will not improve by retrying; a refused
        // protocol version is retried with 3.1.1 (onError).
        if (typeof error.code === 'number' && error !== this.protocolRefusal) {
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

  private readonly onConnect = (connack: IConnackPacket): void => {
    const stream: unknown = this.client.stream;
    // Packets written in one event-loop turn leave in one write: the PUBACK of a result and the next
    // invoke, or many invokes and acks under load, instead of one write system call each (which on
    // loopback also wakes the broker), and without the stream's cost for each small piece of a packet.
    if (stream instanceof Writable) collectWrites(stream);
    this.maxPacketBytes = connack.properties?.maximumPacketSize;
    this.subscriptions.idsAvailable = connack.properties?.subscriptionIdentifiersAvailable !== false;
    this.disconnectReason = undefined;
    // Request/response over QoS 1 stalls ~40 ms per hop on Nagle + delayed ACK without this.
    if (stream instanceof Socket) stream.setNoDelay(true);
    const reconnect = this.connectedOnce;
    this.connectedOnce = true;
    this.sessionUp = true;
    this.failedAttempts = 0;
    this.log.info({ url: redactUrl(this.options.url), reconnect, mqtt: this.protocolVersion === 5 ? '5' : '3.1.1' }, 'connected to external broker');
    this.subscriptions.resubscribeAll();
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
      const reason = this.closing
        ? 'the Core is closing its broker connection'
        : (this.disconnectReason ?? `the connection to ${redactUrl(this.options.url)} closed`);
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
    if (packet.retain && isCommandTopic(topic)) return this.retainedCommands.clear(topic, payload);
    if (this.retainedCommands.isEchoOfClearing(topic, payload)) return;
    const message: IncomingMessage = { topic, payload, publisher: undefined, retain: packet.retain };
    if (packet.properties) message.properties = messageProperties(packet.properties);
    this.traffic.received++;
    this.traffic.received_bytes += payload.length;
    this.subscriptions.deliver(message, packet.properties?.subscriptionIdentifier);
  };

  private readonly onPacketReceive = (packet: Packet): void => {
    if (packet.cmd === 'puback') this.pubackReason = packet.reasonCode;
  };

  /** A refused publish names the broker's reason (MQTT 5 PUBACK reason code) and is logged. */
  private publishRefusal(topic: string, error: Error & { code?: unknown }): Error {
    if (typeof error.code !== 'number') return error;
    this.reasons.refused('publish', error.code, { topic });
    return new Error(`the broker refused the message on ${topic}: ${describeReasonCode(error.code)}`);
  }

  /** An MQTT 5 broker says why it closes the session (session taken over, server shutting down...). */
  private readonly onDisconnectPacket = (packet: IDisconnectPacket): void => {
    const code = packet.reasonCode ?? 0;
    const said = packet.properties?.reasonString ? `: ${packet.properties.reasonString}` : '';
    this.disconnectReason = `the broker disconnected the Core: ${describeReasonCode(code)}${said}`;
    this.log.warn(
      { url: redactUrl(this.options.url), reason: describeReasonCode(code), reason_code: code, reason_string: packet.properties?.reasonString },
      'the broker disconnected the Core',
    );
  };

  /** The CONNACK error that refused MQTT 5, handled by falling back rather than failing the connection. */
  private protocolRefusal: Error | undefined;
  private readonly onError = (error: Error & { code?: unknown }): void => {
    if (isProtocolVersionRefusal(error) && this.client.options.protocolVersion === 5) {
      // The broker speaks only 3.1.1: the reconnect that follows the refusal uses 3.1.1, for good.
      this.client.options.protocolVersion = 4;
      if (!this.protocolRefusal) {
        this.protocolRefusal = error;
        this.log.warn(
          { url: redactUrl(this.options.url), connack: error.message, code: error.code },
          'the broker refused MQTT 5 (CONNACK: unacceptable protocol version); connecting with MQTT 3.1.1 instead: no message expiry, no user properties, no reason codes',
        );
      }
      return;
    }
    this.log.warn({ err: error.message, code: error.code, url: redactUrl(this.options.url) }, 'broker connection error');
  };
}

const noTrace = (): void => undefined;
