// One connected plugin: owns the MQTT client and wires registration, heartbeat, Core-status watching
// and invocation together. Created by connectPlugin once the descriptor and handlers check out.
import { EventEmitter } from 'node:events';
import type { MqttClient } from 'mqtt';
import { topics } from '../protocol/topics.js';
import type {
  HeartbeatMessage,
  PluginDescriptor,
  PluginResult,
  PluginStatusMessage,
  RegisterMessage,
  UnregisterMessage,
  ValidationIssue,
} from '../protocol/types.js';
import { parseJsonPayload, validatePayload } from '../protocol/validate.js';
import { wireDescriptor } from './descriptor.js';
import { PluginRegistrationError } from './errors.js';
import { Heartbeat } from './heartbeat.js';
import { Notifications, PluginNotifyError, type NotifyOptions } from './notifications.js';
import { InvocationRunner, type InvokeProperties } from './invocation-runner.js';
import { isHandledProtocolRefusal } from './mqtt-connection.js';
import type { ParameterValidator } from './parameter-validator.js';
import { Registration } from './registration.js';
import type { CapabilityHandlers, CloseOptions, ConnectedPlugin, PluginEvents, PluginStats, SdkLogger } from './types.js';

export interface PluginConnectionDeps {
  client: MqttClient;
  descriptor: PluginDescriptor;
  handlers: CapabilityHandlers;
  parameters: ParameterValidator;
  clientId: string;
  epoch: number;
  heartbeat_interval_sec: number;
  max_payload_bytes: number;
  /** Timeout of registrations after the first one (Core restart, control). */
  register_timeout_ms: number;
  log: SdkLogger;
}

/** How long close() waits for its goodbye messages before it drops the connection anyway. */
const CLOSE_GRACE_MS = 2000;

export class PluginConnection extends EventEmitter implements ConnectedPlugin {
  readonly pluginId: string;
  readonly epoch: number;
  readonly clientId: string;
  private readonly client: MqttClient;
  private readonly log: SdkLogger;
  private readonly counters: PluginStats = {
    connects: 0,
    registrations: 0,
    heartbeats: 0,
    invocations: 0,
    succeeded: 0,
    failed: 0,
    refused: 0,
    dropped: 0,
    late: 0,
  };
  private readonly registration: Registration;
  private readonly heartbeat: Heartbeat;
  private readonly runner: InvocationRunner;
  private readonly notifications: Notifications;
  /** ts of the newest Core birth seen; a newer one means the Core restarted and forgot us. */
  private lastCoreBirth: number | undefined;
  private registeredOnce = false;
  private starting = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private closing = false;

  constructor(private readonly deps: PluginConnectionDeps) {
    super();
    this.pluginId = deps.descriptor.id;
    this.epoch = deps.epoch;
    this.clientId = deps.clientId;
    this.client = deps.client;
    this.log = deps.log;
    this.registration = new Registration({
      clientId: deps.clientId,
      message: () => this.registerMessage(),
      publish: async (message) => {
        await this.client.publishAsync(topics.register(), JSON.stringify(message), { qos: 1 });
      },
    });
    this.heartbeat = new Heartbeat({
      epoch: deps.epoch,
      interval_ms: deps.heartbeat_interval_sec * 1000,
      send: (message) => this.sendHeartbeat(message),
    });
    this.runner = new InvocationRunner({
      pluginId: this.pluginId,
      capabilities: deps.descriptor.capabilities,
      handlers: deps.handlers,
      parameters: deps.parameters,
      max_concurrency: concurrencyOf(deps.descriptor),
      max_payload_bytes: deps.max_payload_bytes,
      log: deps.log,
      stats: this.counters,
      publishResult: (result) => this.publishResult(result),
    });
    this.notifications = new Notifications(async (message) => {
      await this.client.publishAsync(topics.notify(this.pluginId), JSON.stringify(message), { qos: 1 });
    });
    this.client.on('message', (topic, payload, packet) => this.onMessage(topic, payload, packet.retain, packet.properties));
    this.client.on('connect', () => void this.onConnect());
    this.client.on('reconnect', () => this.emit('reconnecting'));
    this.client.on('offline', () => this.emit('offline'));
    this.client.on('error', (error) => {
      // A broker refusing MQTT 5 is not an error: the client goes on with 3.1.1 (logged once).
      if (isHandledProtocolRefusal(error)) return;
      this.log.warn({ err: error }, 'mqtt client error');
      if (this.listenerCount('error') > 0) this.emit('error', error);
    });
  }

  get connected(): boolean {
    return this.client.connected;
  }

  /** Sends a user a message outside any request; resolves with the channel the Core delivered it on. */
  async notify(userId: string, text: string, options?: NotifyOptions): Promise<{ channel: string }> {
    if (!this.client.connected || this.closing) throw new PluginNotifyError('not connected to the broker', 'not_connected');
    return this.notifications.send(userId, text, options);
  }

  stats(): PluginStats {
    return { ...this.counters, heartbeats: this.heartbeat.sent };
  }

  /**
   * First registration, called by connectPlugin once the client is connected: an unanswered attempt
   * is repeated until the startup deadline (the Core may still be starting), a refusal surfaces to the
   * caller at once. Later connects register on their own.
   */
  async start(deadline: number): Promise<void> {
    this.starting = true;
    try {
      await this.prepareSession();
      for (;;) {
        const left = deadline - Date.now();
        const outcome = await this.registration.register(Math.max(1, Math.min(left, this.deps.register_timeout_ms)));
        if (outcome.ok) break;
        if (outcome.refused || Date.now() >= deadline || this.closing) {
          throw new PluginRegistrationError(`plugin "${this.pluginId}" was not registered`, outcome.errors);
        }
        this.log.warn({ errors: outcome.errors }, 'registration unanswered; trying again');
      }
    } finally {
      this.starting = false;
    }
    this.registered();
  }

  async reregister(): Promise<void> {
    const outcome = await this.registration.register(this.deps.register_timeout_ms);
    if (!outcome.ok) {
      this.registrationFailed(outcome.errors);
      throw new PluginRegistrationError(`plugin "${this.pluginId}" was not registered`, outcome.errors);
    }
    this.registered();
  }

  async close(options: CloseOptions = {}): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.heartbeat.stop();
    clearTimeout(this.retryTimer);
    this.runner.close();
    this.registration.cancel('plugin closing');
    this.notifications.cancelAll('the plugin is closing');
    if (this.client.connected) {
      const goodbye = async (): Promise<void> => {
        const status: PluginStatusMessage = { state: 'offline', epoch: this.epoch, ts: Date.now() };
        await this.client.publishAsync(topics.status(this.pluginId), JSON.stringify(status), { qos: 1, retain: true });
        if (options.unregister) {
          const message: UnregisterMessage = { plugin_id: this.pluginId };
          await this.client.publishAsync(topics.unregister(), JSON.stringify(message), { qos: 1 });
        }
      };
      await withTimeout(goodbye(), CLOSE_GRACE_MS).catch((error: unknown) => this.log.warn({ err: error }, 'goodbye messages not confirmed'));
      // A graceful DISCONNECT: the broker discards the will, the retained offline status already says it.
      await withTimeout(this.client.endAsync(), CLOSE_GRACE_MS).catch(() => this.client.end(true));
    } else {
      await this.client.endAsync(true);
    }
  }

  override on<E extends keyof PluginEvents>(event: E, listener: (...args: PluginEvents[E]) => void): this {
    return super.on(event, listener as (...args: unknown[]) => void);
  }

  override off<E extends keyof PluginEvents>(event: E, listener: (...args: PluginEvents[E]) => void): this {
    return super.off(event, listener as (...args: unknown[]) => void);
  }

  /** Subscriptions first, so the ack and the first invoke cannot arrive before we listen. */
  private async prepareSession(): Promise<void> {
    this.counters.connects++;
    await this.client.subscribeAsync(
      [
        topics.registered(this.pluginId),
        topics.registeredInvalid(),
        topics.invoke(this.pluginId),
        topics.control(this.pluginId),
        topics.notified(this.pluginId),
        topics.coreStatus(),
      ],
      { qos: 1 },
    );
    const status: PluginStatusMessage = { state: 'online', epoch: this.epoch, ts: Date.now() };
    await this.client.publishAsync(topics.status(this.pluginId), JSON.stringify(status), { qos: 1, retain: true });
  }

  /** Reconnects only: the first connect is driven by start(), which also retries the registration. */
  private async onConnect(): Promise<void> {
    if (this.closing || (!this.registeredOnce && !this.starting)) return;
    try {
      await this.prepareSession();
    } catch (error) {
      // The connection dropped again; the next connect starts over.
      this.log.warn({ err: error }, 'session setup after reconnect failed');
      return;
    }
    if (this.registeredOnce) this.registerInBackground('reconnected');
  }

  /**
   * Registrations the plugin starts itself (reconnect, Core birth, control). One that goes unanswered
   * (the Core is restarting, or was not subscribed yet) is retried with a growing delay while
   * connected; a refusal is reported and not retried, since the same descriptor would be refused again.
   */
  private registerInBackground(reason: string, attempt = 0): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.closing) return;
    this.log.info({ reason, attempt }, 're-registering');
    void this.registration.register(this.deps.register_timeout_ms).then((outcome) => {
      if (outcome.ok) {
        this.registered();
        return;
      }
      if (outcome.refused) {
        this.registrationFailed(outcome.errors);
        return;
      }
      this.log.warn({ errors: outcome.errors }, 'registration unanswered');
      if (this.closing || !this.client.connected) return;
      const delay = Math.min(1000 * 2 ** attempt, 30_000);
      this.retryTimer = setTimeout(() => this.registerInBackground('retry', attempt + 1), delay);
    });
  }

  private registrationFailed(errors: ValidationIssue[]): void {
    this.log.error({ errors }, 'registration refused');
    this.emit('registration_failed', errors);
  }

  private registered(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.registeredOnce = true;
    this.counters.registrations++;
    this.heartbeat.start();
    this.log.info({ plugin_id: this.pluginId, epoch: this.epoch }, 'registered');
    this.emit('registered');
  }

  private registerMessage(): RegisterMessage {
    return {
      ...wireDescriptor(this.deps.descriptor),
      epoch: this.epoch,
      heartbeat_interval_sec: this.deps.heartbeat_interval_sec,
    };
  }

  private sendHeartbeat(message: HeartbeatMessage): boolean {
    if (!this.client.connected || this.closing) return false;
    this.client.publish(topics.heartbeat(this.pluginId), JSON.stringify(message), { qos: 0 });
    return true;
  }

  private async publishResult(result: PluginResult): Promise<void> {
    await this.client.publishAsync(topics.result(result.request_id), JSON.stringify(result), { qos: 1 });
  }

  /** Never throws: bad input is logged and dropped (there is no reply topic for these messages). */
  private onMessage(topic: string, payload: Buffer, retained: boolean, properties?: InvokeProperties): void {
    try {
      if (this.closing) return;
      if (topic === topics.invoke(this.pluginId)) {
        // A retained invoke is a stored copy replayed on subscription, not a request from the Core.
        if (retained) {
          if (payload.length > 0) this.log.warn({ topic }, 'retained invoke ignored: requests are acted on only when sent');
          return;
        }
        this.runner.onInvoke(payload, properties);
      } else if (topic === topics.registered(this.pluginId) || topic === topics.registeredInvalid()) {
        this.onAck(topic, payload);
      } else if (topic === topics.control(this.pluginId)) {
        this.onControl(payload);
      } else if (topic === topics.notified(this.pluginId)) {
        const ack = this.parse('notified', payload, topic);
        if (ack) this.notifications.onAck(ack);
      } else if (topic === topics.coreStatus()) {
        this.onCoreStatus(payload, retained);
      }
    } catch (error) {
      this.log.error({ err: error, topic }, 'message handling failed');
    }
  }

  private onAck(topic: string, payload: Buffer): void {
    const ack = this.parse('registered', payload, topic);
    if (!ack) return;
    if (topic === topics.registeredInvalid()) this.registration.onInvalidAck(ack);
    else this.registration.onAck(ack);
  }

  private onControl(payload: Buffer): void {
    const control = this.parse('control', payload, topics.control(this.pluginId));
    if (!control) return;
    if (control.cmd === 'reregister') this.registerInBackground(`control: ${control.reason ?? 'reregister'}`);
  }

  /**
   * A birth delivered live (retain flag 0) means a Core started after we subscribed and knows nothing
   * of us. A retained one arrives with each (re)subscription and describes a Core that was already up:
   * the registration every connect sends covers it.
   */
  private onCoreStatus(payload: Buffer, retained: boolean): void {
    if (payload.length === 0) return; // a cleared retained message
    const status = this.parse('core/status', payload, topics.coreStatus());
    if (!status?.online) return;
    if (this.lastCoreBirth !== undefined && status.ts <= this.lastCoreBirth) return;
    this.lastCoreBirth = status.ts;
    if (retained) return;
    if (this.registeredOnce) {
      this.registerInBackground('Core restarted');
    } else if (this.starting) {
      // The first registration may have gone to nobody; its waiter takes the ack of this one.
      void this.registration.register(this.deps.register_timeout_ms);
    }
  }

  private parse<K extends 'registered' | 'control' | 'core/status' | 'notified'>(kind: K, payload: Buffer, topic: string) {
    const parsed = parseJsonPayload(payload, this.deps.max_payload_bytes);
    if (!parsed.ok) {
      this.log.warn({ topic, errors: parsed.errors }, 'unreadable message dropped');
      return undefined;
    }
    const valid = validatePayload(kind, parsed.value);
    if (!valid.ok) {
      this.log.warn({ topic, errors: valid.errors }, 'invalid message dropped');
      return undefined;
    }
    return valid.value;
  }
}

function concurrencyOf(descriptor: PluginDescriptor): number {
  const limit = descriptor.config.max_concurrency;
  return typeof limit === 'number' && Number.isInteger(limit) && limit >= 1 ? limit : Number.POSITIVE_INFINITY;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
