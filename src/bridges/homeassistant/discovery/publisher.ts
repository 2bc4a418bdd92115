// Makes the Core and its plugins appear in Home Assistant through MQTT device discovery: retained
// discovery for each device, retained state topics under homeclaw/ha/..., everything again when Home
// Assistant announces itself online, a removed plugin's device deleted (empty retained payload), and a
// press of a capability's button turned into an invocation. At start, retained devices of this origin
// whose plugin is gone are cleared too, so nothing removed lingers in Home Assistant.
import type { CoreBus, IncomingMessage } from '../../../bus/core-bus.js';
import type { DispatcherApi } from '../../../dispatch/dispatcher-api.js';
import type { InvocationRecord } from '../../../dispatch/dispatcher.js';
import type { Logger } from '../../../log.js';
import { filters, haFilters, parseTopic, topics } from '../../../protocol/topics.js';
import type { HaCoreState, HaPluginState } from '../../../protocol/types.js';
import { validatePayload } from '../../../protocol/validate.js';
import type { PluginRecord } from '../../../registry/record.js';
import type { RegistryApi } from '../../../registry/registry-api.js';
import type { RetrievalStatus } from '../../../retrieval/search-api.js';
import { InvocationActivity } from './activity.js';
import { CORE_OBJECT_ID, coreDiscovery, hasButton, ORIGIN_NAME, pluginDiscovery, pluginObjectId } from './payloads.js';

export interface DiscoveryPublisherDeps {
  bus: CoreBus;
  registry: RegistryApi;
  dispatcher: DispatcherApi;
  retrievalStatus: () => RetrievalStatus;
  /** Home Assistant's discovery prefix (one topic level). */
  prefix: string;
  log: Logger;
  /** How often the Core's state is published even without changes (calls per minute decay). Default 30 s. */
  state_interval_ms?: number;
  /** A plugin's state is published at most once per this many ms. Default 1 s. */
  plugin_state_min_interval_ms?: number;
}

const RETAINED = { qos: 1, retain: true } as const;

export class DiscoveryPublisher {
  private readonly activity = new InvocationActivity();
  private readonly published = new Map<string, string>();
  private readonly throttled = new Map<string, { dirty: boolean }>();
  private readonly unsubscribe: (() => Promise<void> | void)[] = [];
  private coreStateTimer: NodeJS.Timeout | undefined;
  private coreStateSoon: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly log: Logger;

  constructor(private readonly deps: DiscoveryPublisherDeps) {
    this.log = deps.log.child({ room: 'bridges', bridge: 'homeassistant', component: 'discovery' });
  }

  async start(): Promise<void> {
    const { bus, registry, prefix } = this.deps;
    const guard = (handler: (message: IncomingMessage) => Promise<void>) => (message: IncomingMessage) => {
      handler(message).catch((err: unknown) => this.log.error({ err, topic: message.topic }, 'discovery handler failed'));
    };
    this.unsubscribe.push(
      await bus.subscribe(
        topics.haStatus(prefix),
        guard((m) => this.onHomeAssistantStatus(m)),
      ),
      await bus.subscribe(
        filters.haPress,
        guard((m) => this.onPress(m)),
      ),
      await bus.subscribe(
        haFilters.discovery(prefix),
        guard((m) => this.onRetainedDiscovery(m)),
      ),
      registry.events.on('plugin.registered', ({ record }) => this.publishPlugin(record)),
      registry.events.on('plugin.updated', ({ record }) => this.publishPlugin(record)),
      registry.events.on('plugin.health', ({ record }) => {
        this.schedulePluginState(record.descriptor.id);
        this.scheduleCoreState();
      }),
      registry.events.on('plugin.removed', ({ record }) => void this.removePlugin(record.descriptor.id)),
    );
    this.coreStateTimer = setInterval(() => void this.publishCoreState(), this.deps.state_interval_ms ?? 30_000);
    this.coreStateTimer.unref();
    await this.publishAll(false);
    this.log.info({ prefix, devices: registry.list().length + 1 }, 'Home Assistant discovery published');
  }

  /** Counts a finished invocation for the Core's calls per minute and the plugin's last outcome. */
  invocationFinished(record: InvocationRecord): void {
    if (this.stopped) return;
    this.activity.record(record);
    this.schedulePluginState(record.plugin_id);
    this.scheduleCoreState();
  }

  /** Every device and state; `force` republishes discovery that did not change (Home Assistant restarted). */
  async publishAll(force: boolean): Promise<void> {
    if (force) this.published.clear();
    await this.publishDiscovery(CORE_OBJECT_ID, coreDiscovery());
    await this.publishCoreState();
    for (const record of this.deps.registry.list()) {
      await this.publishDiscovery(pluginObjectId(record.descriptor.id), pluginDiscovery(record));
      await this.publishPluginState(record.descriptor.id);
    }
  }

  private publishPlugin(record: PluginRecord): void {
    void this.publishDiscovery(pluginObjectId(record.descriptor.id), pluginDiscovery(record)).then(() => this.publishPluginState(record.descriptor.id));
    this.scheduleCoreState();
  }

  private async publishDiscovery(objectId: string, payload: object): Promise<void> {
    const json = JSON.stringify(payload);
    if (this.published.get(objectId) === json) return;
    this.published.set(objectId, json);
    // Forgotten on failure, so the next change or Home Assistant's next birth sends it again.
    if (!(await this.send(topics.haDiscovery(this.deps.prefix, objectId), json))) this.published.delete(objectId);
  }

  private async removePlugin(pluginId: string): Promise<void> {
    const objectId = pluginObjectId(pluginId);
    this.published.delete(objectId);
    this.activity.forget(pluginId);
    // An empty retained payload deletes the device in Home Assistant and the retained copies in the broker.
    await this.send(topics.haDiscovery(this.deps.prefix, objectId), '');
    await this.send(topics.haPluginState(pluginId), '');
    this.log.info({ plugin_id: pluginId, object_id: objectId }, 'Home Assistant device removed');
    this.scheduleCoreState();
  }

  private async publishCoreState(): Promise<void> {
    if (this.stopped) return;
    const records = this.deps.registry.list();
    const retrieval = this.deps.retrievalStatus();
    const state: HaCoreState = {
      plugins_online: records.filter((record) => record.state === 'online').length,
      plugins_total: records.length,
      calls_per_minute: this.activity.callsPerMinute(),
      retrieval: retrieval.state,
      retrieval_reason: retrieval.reason ?? null,
      ts: Date.now(),
    };
    await this.send(topics.haCoreState(), JSON.stringify(state));
  }

  private async publishPluginState(pluginId: string): Promise<void> {
    const record = this.deps.registry.get(pluginId);
    if (!record || this.stopped) return;
    const last = this.activity.lastOf(pluginId);
    const state: HaPluginState = {
      state: record.state,
      reason: record.state_reason ?? null,
      last_outcome: last?.outcome ?? null,
      last_latency_ms: last?.latency_ms ?? null,
      ts: Date.now(),
    };
    await this.send(topics.haPluginState(pluginId), JSON.stringify(state));
  }

  /** At most one state publish per plugin per interval; changes in between are sent at its end. */
  private schedulePluginState(pluginId: string): void {
    const pending = this.throttled.get(pluginId);
    if (pending) {
      pending.dirty = true;
      return;
    }
    void this.publishPluginState(pluginId);
    const entry = { dirty: false };
    this.throttled.set(pluginId, entry);
    setTimeout(() => {
      this.throttled.delete(pluginId);
      if (entry.dirty) this.schedulePluginState(pluginId);
    }, this.deps.plugin_state_min_interval_ms ?? 1_000).unref();
  }

  private scheduleCoreState(): void {
    if (this.coreStateSoon || this.stopped) return;
    this.coreStateSoon = setTimeout(() => {
      this.coreStateSoon = undefined;
      void this.publishCoreState();
    }, 200);
    this.coreStateSoon.unref();
  }

  private async send(topic: string, payload: string): Promise<boolean> {
    try {
      await this.deps.bus.publish(topic, payload, RETAINED);
      return true;
    } catch (err) {
      this.log.warn({ err: (err as Error).message, topic }, 'Home Assistant discovery publish failed');
      return false;
    }
  }

  private async onHomeAssistantStatus(message: IncomingMessage): Promise<void> {
    const status = message.payload.toString('utf8').trim();
    if (!validatePayload('ha/status', status).ok) {
      this.log.warn({ topic: message.topic, payload: status.slice(0, 40) }, 'unexpected Home Assistant status ignored');
      return;
    }
    if (status !== 'online' || this.stopped) return;
    this.log.info('Home Assistant is online; publishing discovery again');
    await this.publishAll(true);
  }

  private async onPress(message: IncomingMessage): Promise<void> {
    const parsed = parseTopic(message.topic);
    const pluginId = parsed?.kind === 'ha/press' ? parsed.param : undefined;
    const capabilityId = parsed?.capability;
    const payload = message.payload.toString('utf8');
    const problem = message.retain
      ? 'a retained button press is never acted on'
      : !validatePayload('ha/press', payload).ok
        ? `payload ${JSON.stringify(payload.slice(0, 40))} is not a button press`
        : this.buttonProblem(pluginId, capabilityId);
    if (problem !== undefined || pluginId === undefined || capabilityId === undefined) {
      this.log.warn({ topic: message.topic, reason: problem }, 'Home Assistant button press ignored');
      return;
    }
    const result = await this.deps.dispatcher.invoke({
      plugin_id: pluginId,
      capability_id: capabilityId,
      parameters: {},
      context: { channel_name: 'homeassistant', channel_type: 'homeassistant' },
    });
    const fields = { plugin_id: pluginId, capability_id: capabilityId, request_id: result.request_id, success: result.success, error_code: result.error_code };
    if (result.success) this.log.info(fields, 'Home Assistant button press invoked the capability');
    else this.log.warn({ ...fields, error: result.error }, 'Home Assistant button press failed');
  }

  private buttonProblem(pluginId: string | undefined, capabilityId: string | undefined): string | undefined {
    const record = pluginId === undefined ? undefined : this.deps.registry.get(pluginId);
    if (!record) return `no plugin "${pluginId ?? ''}" is registered`;
    const capability = record.descriptor.capabilities.find((c) => c.id === capabilityId);
    if (!capability) return `plugin "${record.descriptor.id}" has no capability "${capabilityId ?? ''}"`;
    if (!hasButton(record, capability)) return `capability "${capability.id}" has no button (it needs parameters)`;
    return undefined;
  }

  private async onRetainedDiscovery(message: IncomingMessage): Promise<void> {
    // Only replays of retained configs matter here; live ones are this Core's own publishes.
    if (!message.retain || message.payload.length === 0) return;
    const parsed = parseTopic(message.topic, this.deps.prefix);
    const objectId = parsed?.kind === 'ha/discovery' ? parsed.param : undefined;
    if (!objectId?.startsWith('homeclaw_') || objectId === CORE_OBJECT_ID) return;
    let origin: unknown;
    try {
      origin = (JSON.parse(message.payload.toString('utf8')) as { o?: { name?: unknown } }).o?.name;
    } catch {
      return;
    }
    if (origin !== ORIGIN_NAME) return;
    const pluginId = objectId === pluginObjectId('core') ? 'core' : objectId.slice('homeclaw_'.length);
    if (this.deps.registry.get(pluginId)) return;
    this.log.info({ object_id: objectId }, 'clearing a Home Assistant device whose plugin is gone');
    await this.removePlugin(pluginId);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.coreStateTimer) clearInterval(this.coreStateTimer);
    if (this.coreStateSoon) clearTimeout(this.coreStateSoon);
    for (const off of this.unsubscribe.splice(0)) await off();
  }
}
