// A minimal stand-in for the Core, over a real MQTT connection: it publishes its retained birth, acks
// registrations (by a policy the test can change), sends invokes and collects everything plugins
// publish. Enough to test plugins (SDK or any language) without the real Core.
import { randomUUID } from 'node:crypto';
import { connectAsync, type MqttClient } from 'mqtt';
import { filters, parseTopic, topics } from '../../src/protocol/topics.js';
import type {
  CoreStatusMessage,
  HeartbeatMessage,
  JsonObject,
  PluginRequest,
  PluginResult,
  PluginStatusMessage,
  RegisterMessage,
  RegistrationAck,
} from '../../src/protocol/types.js';

export interface ReceivedMessage {
  topic: string;
  /** Parsed JSON, or undefined when the payload was not JSON (or empty). */
  json: unknown;
  retain: boolean;
  at: number;
}

/** Decides the ack for a registration; the default accepts every message that carries a string id. */
export type AckPolicy = (message: RegisterMessage) => RegistrationAck;

export const acceptAll: AckPolicy = (message) => ({ plugin_id: String(message['id'] ?? message['plugin_id']), ok: true });

export interface InvokeOptions {
  request_id?: string;
  /** Relative deadline; default 10 s. */
  timeout_ms?: number;
  /** Absolute deadline; overrides timeout_ms. */
  deadline?: number;
  /** Extra or overriding request fields, e.g. a wrong plugin_id. */
  extra?: Record<string, unknown>;
}

export class FakeCore {
  readonly messages: ReceivedMessage[] = [];
  private waiters: { match: (m: ReceivedMessage) => boolean; resolve: (m: ReceivedMessage) => void }[] = [];
  private ackPolicy: AckPolicy = acceptAll;
  private birthTs = 0;

  private constructor(private readonly client: MqttClient) {}

  static async start(url: string, options: { clientId?: string; publishBirth?: boolean } = {}): Promise<FakeCore> {
    const client = await connectAsync(url, {
      clientId: options.clientId ?? `fake-core-${randomUUID().slice(0, 8)}`,
      protocolVersion: 4,
      reconnectPeriod: 200,
      will: { topic: topics.coreStatus(), payload: Buffer.from(JSON.stringify({ online: false, ts: Date.now() })), qos: 1, retain: true },
    });
    const core = new FakeCore(client);
    client.on('message', (topic, payload, packet) => core.onMessage(topic, payload, packet.retain));
    // Subscribe again after a broker restart: the fresh broker knows nothing of us.
    client.on('connect', () => void core.subscribeAll().catch(() => {}));
    await core.subscribeAll();
    if (options.publishBirth !== false) await core.birth();
    return core;
  }

  private async subscribeAll(): Promise<void> {
    await this.client.subscribeAsync([filters.register, filters.unregister, filters.heartbeat, filters.status, filters.result, topics.registeredInvalid()], {
      qos: 1,
    });
  }

  setAckPolicy(policy: AckPolicy): void {
    this.ackPolicy = policy;
  }

  /** Publishes a retained birth with a ts newer than any before, as a restarted Core does. */
  async birth(): Promise<number> {
    this.birthTs = Math.max(Date.now(), this.birthTs + 1);
    const status: CoreStatusMessage = { online: true, ts: this.birthTs };
    await this.client.publishAsync(topics.coreStatus(), JSON.stringify(status), { qos: 1, retain: true });
    return this.birthTs;
  }

  async control(pluginId: string, payload: unknown = { cmd: 'reregister', reason: 'test' }): Promise<void> {
    await this.publishRaw(topics.control(pluginId), JSON.stringify(payload));
  }

  async publishRaw(topic: string, payload: string | Buffer, options: { retain?: boolean } = {}): Promise<void> {
    await this.client.publishAsync(topic, payload, { qos: 1, retain: options.retain ?? false });
  }

  /** Sends a PluginRequest and resolves with the final (non-progress) result. */
  async invoke(
    pluginId: string,
    capabilityId: string,
    parameters: JsonObject,
    options: InvokeOptions = {},
  ): Promise<{ result: PluginResult; progress: PluginResult[]; request: PluginRequest }> {
    const request_id = options.request_id ?? randomUUID();
    const request = {
      request_id,
      plugin_id: pluginId,
      capability_id: capabilityId,
      parameters,
      deadline: options.deadline ?? Date.now() + (options.timeout_ms ?? 10_000),
      ...options.extra,
    } as PluginRequest;
    const resultTopic = topics.result(request_id);
    const final = this.waitFor((m) => m.topic === resultTopic && !(m.json as PluginResult | undefined)?.progress, 15_000);
    await this.publishRaw(topics.invoke(pluginId), JSON.stringify(request));
    const message = await final;
    const progress = this.messages.filter((m) => m.topic === resultTopic && (m.json as PluginResult | undefined)?.progress).map((m) => m.json as PluginResult);
    return { result: message.json as PluginResult, progress, request };
  }

  registrations(pluginId?: string): RegisterMessage[] {
    return this.ofKind('register')
      .map((m) => m.json as RegisterMessage)
      .filter((r) => pluginId === undefined || r['id'] === pluginId || r['plugin_id'] === pluginId);
  }

  heartbeats(pluginId: string): HeartbeatMessage[] {
    return this.messages.filter((m) => m.topic === topics.heartbeat(pluginId)).map((m) => m.json as HeartbeatMessage);
  }

  statuses(pluginId: string): PluginStatusMessage[] {
    return this.messages.filter((m) => m.topic === topics.status(pluginId)).map((m) => m.json as PluginStatusMessage);
  }

  resultsFor(requestId: string): PluginResult[] {
    return this.messages.filter((m) => m.topic === topics.result(requestId)).map((m) => m.json as PluginResult);
  }

  /** Waits for the next matching message, or one already received when `includePast` is set. */
  waitFor(match: (m: ReceivedMessage) => boolean, timeoutMs = 10_000, includePast = false): Promise<ReceivedMessage> {
    if (includePast) {
      const found = this.messages.find(match);
      if (found) return Promise.resolve(found);
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        match,
        resolve: (m: ReceivedMessage) => {
          clearTimeout(timer);
          resolve(m);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`fake core: no matching message within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** Resolves with the registration of pluginId number `count` (1-based) counted from the start. */
  async waitForRegistration(pluginId: string, count = 1, timeoutMs = 10_000): Promise<RegisterMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const regs = this.registrations(pluginId);
      if (regs.length >= count) return regs[count - 1]!;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`fake core: registration #${count} of ${pluginId} not seen (got ${regs.length})`);
      await this.waitFor((m) => parseTopic(m.topic)?.kind === 'register', left).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    await this.client.endAsync(true);
  }

  private ofKind(kind: string): ReceivedMessage[] {
    return this.messages.filter((m) => parseTopic(m.topic)?.kind === kind);
  }

  private onMessage(topic: string, payload: Buffer, retain: boolean): void {
    let json: unknown;
    try {
      json = payload.length > 0 ? JSON.parse(payload.toString('utf8')) : undefined;
    } catch {
      json = undefined;
    }
    const message: ReceivedMessage = { topic, json, retain, at: Date.now() };
    this.messages.push(message);
    if (parseTopic(topic)?.kind === 'register' && json && typeof json === 'object') this.ack(json as RegisterMessage);
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) {
      if (waiter.match(message)) waiter.resolve(message);
      else this.waiters.push(waiter);
    }
  }

  private ack(message: RegisterMessage): void {
    const ack = this.ackPolicy(message);
    const topic = ack.client_id !== undefined ? topics.registeredInvalid() : topics.registered(String(ack.plugin_id));
    void this.client.publishAsync(topic, JSON.stringify(ack), { qos: 1 }).catch(() => {});
  }
}
