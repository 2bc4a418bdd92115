// The MQTT side of plugin liveness: registration and its ack, unregistration, status (wills with
// epochs), heartbeats, and the Core's own retained birth. Invalid input is answered on the plugin's
// reply topic and changes nothing; nothing here may throw into the broker.
import type { CoreBus, IncomingMessage, PublisherIdentity } from '../bus/core-bus.js';
import { ownerOf } from '../bus/core-bus.js';
import type { LivenessConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import { normalizeDescriptor } from '../protocol/descriptor/normalize.js';
import { explainBadId, isPluginId } from '../protocol/ids.js';
import { filters, parseTopic, topics } from '../protocol/topics.js';
import type { RegistrationAck, ValidationIssue } from '../protocol/types.js';
import { dedupeIssues, parseJsonPayload, validatePayload } from '../protocol/validate.js';
import type { RegisterOutcome, RegistryApi } from '../registry/registry-api.js';
import { diskFullMessage } from '../kit/disk-full.js';
import { UNCLAIMED_OWNER } from '../access/plugin-claims.js';
import type { FetchedDescriptor } from '../adapters/descriptor-fetch.js';
import { isReference, ReferenceRegistrations } from '../adapters/mqtt-register-reference.js';
import { RegistrationQueue, type RegistrationQueueLimits, type WaitingRegistration } from './registration-queue.js';
import { LogWindow } from '../kit/log-window.js';

export interface MqttLifecycleDeps {
  bus: CoreBus;
  registry: RegistryApi;
  log: Logger;
  liveness: LivenessConfig;
  max_payload_bytes: number;
  /** Limits of the registrations waiting their turn; the defaults suit a house (see registration-queue). */
  registration_limits?: Partial<RegistrationQueueLimits>;
  /** Credentials may restrict which ids a client can claim; undefined allows any id. */
  mayUsePluginId?: (publisher: PublisherIdentity | undefined, pluginId: string) => boolean;
  /**
   * Gives the publisher an id another client owns when the access rules allow it (an id an anonymous
   * client held, claimed by a credential that lists it); true when the id is now the publisher's.
   */
  claimPluginId?: (publisher: PublisherIdentity | undefined, pluginId: string, currentOwner: string) => boolean;
  /** Fetches the descriptor of a registration by reference; absent: such registrations are refused. */
  descriptorFetcher?: { fetch(url: string): Promise<FetchedDescriptor> };
  now?: () => number;
}

/** A registration waiting its turn: as received, or a descriptor fetched by reference. */
interface QueuedRegistration extends WaitingRegistration {
  message: IncomingMessage;
  /** The payload as a JSON object; undefined when it is not one (then parseErrors say why). */
  body: Record<string, unknown> | undefined;
  parseErrors: ValidationIssue[];
  /** Where a fetched descriptor came from, named in its errors; undefined for one received as it is. */
  origin?: string;
}

/** At most one reregister request per id in this window, so a confused plugin cannot make the Core spam. */
const CONTROL_COOLDOWN_MS = 5_000;

export class MqttLifecycle {
  private readonly lastSeen = new Map<string, number>();
  /**
   * The newest heartbeat epoch of plugins registered without one (by an administrator over HTTP, for a
   * device that only heartbeats): a will from an older connection is then recognised as stale.
   */
  private readonly heartbeatEpochs = new Map<string, number>();
  private readonly lastControl = new Map<string, number>();
  private readonly unsubscribers: (() => Promise<void>)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  /** Registrations waiting their turn: one is handled per event-loop turn (see queueRegistration). */
  private readonly registrations: RegistrationQueue<QueuedRegistration>;
  private readonly references: ReferenceRegistrations;
  private registering = false;
  readonly counters = { rejected: 0, acked: 0, heartbeats: 0, stale_wills_ignored: 0, reregister_sent: 0, not_queued: 0 };
  private readonly notQueuedLog = new LogWindow();

  constructor(private readonly deps: MqttLifecycleDeps) {
    this.now = deps.now ?? Date.now;
    this.registrations = new RegistrationQueue(deps.registration_limits);
    this.references = new ReferenceRegistrations({
      ...(deps.descriptorFetcher ? { fetcher: deps.descriptorFetcher } : {}),
      ...(deps.mayUsePluginId ? { mayUsePluginId: deps.mayUsePluginId } : {}),
      log: deps.log,
      reject: (pluginId, errors, message, replyOnInvalid) => this.reject(pluginId, errors, message, replyOnInvalid),
      register: (message, body, origin) => this.enqueue(message, body, origin),
    });
  }

  async start(): Promise<void> {
    const { bus } = this.deps;
    const guard = (fn: (m: IncomingMessage) => Promise<void>) => (m: IncomingMessage) => {
      fn(m).catch((err: unknown) => this.deps.log.error({ err, topic: m.topic }, 'lifecycle handler failed'));
    };
    this.unsubscribers.push(
      await bus.subscribe(filters.register, (m) => this.enqueue(m)),
      await bus.subscribe(
        filters.unregister,
        guard((m) => this.onUnregister(m)),
      ),
      await bus.subscribe(
        filters.status,
        guard((m) => this.onStatus(m)),
      ),
      await bus.subscribe(
        filters.heartbeat,
        guard((m) => this.onHeartbeat(m)),
      ),
    );
    // Plugins restored from the database start offline; the retained birth asks them to re-register.
    await bus.publish(topics.coreStatus(), JSON.stringify({ online: true, ts: this.now() }), { qos: 1, retain: true });
    this.timer = setInterval(() => this.checkHeartbeats(), 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    // Registrations not handled yet are dropped with the Core: their plugins re-register on its next birth.
    this.registrations.clear();
    try {
      await this.deps.bus.publish(topics.coreStatus(), JSON.stringify({ online: false, ts: this.now() }), {
        qos: 1,
        retain: true,
      });
    } catch (err) {
      this.deps.log.warn({ err }, 'could not publish the Core offline status');
    }
    for (const off of this.unsubscribers.splice(0)) await off();
  }

  /** A nack on the shared _invalid topic, which every plugin may read, goes only to the one that sent the registration. */
  private async ack(pluginId: string | null, ack: RegistrationAck, sender?: PublisherIdentity): Promise<void> {
    if (pluginId !== null && isPluginId(pluginId)) {
      await this.deps.bus.publish(topics.registered(pluginId), JSON.stringify(ack), { qos: 1 });
      return;
    }
    await this.deps.bus.publish(topics.registeredInvalid(), JSON.stringify(ack), { qos: 1, ...(sender ? { onlyTo: sender } : {}) });
  }

  /**
   * replyOnInvalid: answer on the shared _invalid topic even for a valid id, because the sender's
   * credential may not read that id's ack topic (it claimed an id that is not its own).
   */
  private async reject(pluginId: string | null, errors: ValidationIssue[], message: IncomingMessage, replyOnInvalid = false): Promise<void> {
    this.counters.rejected++;
    this.deps.log.warn({ plugin_id: pluginId, client: message.publisher?.clientId, errors }, 'plugin registration rejected');
    const validId = pluginId !== null && isPluginId(pluginId) && !replyOnInvalid;
    await this.ack(
      validId ? pluginId : null,
      {
        plugin_id: validId ? pluginId : null,
        ok: false,
        errors,
        ...(!validId && message.publisher ? { client_id: message.publisher.clientId } : {}),
      },
      message.publisher,
    );
  }

  /**
   * A burst of plugins (a Core restart, a fleet coming online) delivers its registrations together; each
   * costs normalising, validating, hashing, storing and indexing its words. Handling them one per turn of
   * the event loop, in arrival order, lets invocations and HTTP requests in between instead of waiting
   * for the whole burst.
   */
  private enqueue(message: IncomingMessage, fetched?: Record<string, unknown>, origin?: string): void {
    const parsed = fetched ? ({ ok: true, value: fetched } as const) : parseJsonPayload(message.payload, this.deps.max_payload_bytes);
    const body = parsed.ok ? parsed.value : undefined;
    const registration: QueuedRegistration = {
      message,
      body,
      parseErrors: parsed.ok ? [] : parsed.errors,
      client: message.publisher?.clientId,
      pluginId: body ? (registrationIdOf(body) ?? undefined) : undefined,
      bytes: message.payload.length,
      ...(origin !== undefined ? { origin } : {}),
    };
    const outcome = this.registrations.push(registration);
    if (!outcome.queued) {
      this.counters.not_queued++;
      this.notQueuedLog.warn(
        this.deps.log,
        registration.client ?? '',
        { plugin_id: registration.pluginId, client: registration.client, reason: outcome.reason },
        'registration not queued',
      );
      // Over the total limits the Core is flooded by others: no answer, so a plugin's SDK retries as it does
      // for any unanswered registration instead of giving up. Over its own limit the sender is told, on the
      // shared _invalid topic to the sender alone: the id's own ack topic belongs to whoever owns the id,
      // which the sender has not been checked against yet.
      if (outcome.limit === 'total') return;
      void this.ack(
        null,
        {
          plugin_id: null,
          ok: false,
          errors: [{ path: '', message: outcome.reason }],
          ...(message.publisher ? { client_id: message.publisher.clientId } : {}),
        },
        message.publisher,
      ).catch((err: unknown) => this.deps.log.warn({ err }, 'could not answer a registration that was not queued'));
      return;
    }
    if (this.registering) return;
    this.registering = true;
    setImmediate(this.nextRegistration);
  }

  private readonly nextRegistration = (): void => {
    const next = this.registrations.shift();
    if (next) {
      this.onRegister(next).catch((err: unknown) => this.deps.log.error({ err, topic: next.message.topic }, 'lifecycle handler failed'));
    }
    if (this.registrations.size > 0) setImmediate(this.nextRegistration);
    else this.registering = false;
  };

  private async onRegister({ message, body, parseErrors, origin }: QueuedRegistration): Promise<void> {
    if (!body) return this.reject(null, parseErrors, message);
    // The descriptor is fetched off this queue; the fetched one comes back through it.
    if (origin === undefined && isReference(body)) return this.references.resolve(message, body);
    const rawId = registrationIdOf(body);
    const errors: ValidationIssue[] = [];
    const envelope = validatePayload('register', body);
    if (!envelope.ok) errors.push(...envelope.errors);
    const { epoch, heartbeat_interval_sec, ...descriptorInput } = body;
    const normalized = normalizeDescriptor({ ...descriptorInput, type: 'mqtt' }, { source: 'external', default_type: 'mqtt' });
    if (!normalized.ok) errors.push(...normalized.errors);
    const forbiddenId = rawId !== null && isPluginId(rawId) && this.deps.mayUsePluginId !== undefined && !this.deps.mayUsePluginId(message.publisher, rawId);
    if (forbiddenId) errors.push({ path: '/id', message: `this client's credentials do not allow the plugin id "${rawId}"` });
    if (errors.length > 0 || !normalized.ok) {
      const found = dedupeIssues(errors);
      if (origin) found.unshift({ path: '/descriptor_url', message: `the descriptor at ${origin} is invalid; the paths below are in that document` });
      return this.reject(rawId, found, message, forbiddenId);
    }
    const descriptor = normalized.descriptor;
    const owner = ownerOf(message.publisher);
    const current = this.deps.registry.get(descriptor.id);
    if (current && current.owner !== owner && this.deps.claimPluginId?.(message.publisher, descriptor.id, current.owner)) {
      this.deps.log.info({ plugin_id: descriptor.id, owner, previous_owner: current.owner }, 'plugin id claimed by its credential');
    }
    let outcome: RegisterOutcome;
    try {
      outcome = this.deps.registry.register({
        descriptor,
        owner,
        epoch: typeof epoch === 'number' ? epoch : this.now(),
        heartbeat_interval_sec: typeof heartbeat_interval_sec === 'number' ? heartbeat_interval_sec : this.deps.liveness.default_heartbeat_interval_sec,
        state: 'online',
      });
    } catch (err) {
      const full = diskFullMessage(err, `registering plugin ${descriptor.id}`);
      if (!full) throw err;
      return this.reject(descriptor.id, [{ path: '', message: full }], message);
    }
    if (!outcome.ok) return this.reject(descriptor.id, outcome.errors, message);
    this.lastSeen.set(descriptor.id, this.now());
    this.counters.acked++;
    await this.ack(descriptor.id, { plugin_id: descriptor.id, ok: true });
  }

  private async onUnregister(message: IncomingMessage): Promise<void> {
    const parsed = parseJsonPayload(message.payload, this.deps.max_payload_bytes);
    if (!parsed.ok) return this.reject(null, parsed.errors, message);
    const valid = validatePayload('unregister', parsed.value);
    const rawId = typeof parsed.value.plugin_id === 'string' ? parsed.value.plugin_id : null;
    if (!valid.ok) return this.reject(rawId, valid.errors, message);
    const pluginId = valid.value.plugin_id;
    // Answered to the sender alone: the id's ack topic is its owner's, whose SDK would take a refusal
    // there for the answer to its own registration (a flood of these kept a plugin from starting).
    if (this.deps.mayUsePluginId !== undefined && !this.deps.mayUsePluginId(message.publisher, pluginId)) {
      return this.reject(pluginId, [{ path: '/plugin_id', message: `this client's credentials do not allow the plugin id "${pluginId}"` }], message, true);
    }
    const outcome = this.deps.registry.unregister(pluginId, ownerOf(message.publisher));
    if (!outcome.ok) return this.reject(pluginId, [{ path: '/plugin_id', message: outcome.error }], message);
    this.lastSeen.delete(pluginId);
    this.heartbeatEpochs.delete(pluginId);
    // Clear the retained status so a later subscriber does not see a ghost.
    await this.deps.bus.publish(topics.status(pluginId), '', { qos: 1, retain: true });
  }

  private async onStatus(message: IncomingMessage): Promise<void> {
    if (message.payload.length === 0) return; // a cleared retained status
    const pluginId = parseTopic(message.topic)?.param;
    if (!isPluginId(pluginId)) {
      this.deps.log.warn({ topic: message.topic, reason: explainBadId(pluginId) }, 'status on an invalid topic dropped');
      return;
    }
    const parsed = parseJsonPayload(message.payload, this.deps.max_payload_bytes);
    const valid = parsed.ok ? validatePayload('status', parsed.value) : parsed;
    if (!valid.ok) {
      this.deps.log.warn({ plugin_id: pluginId, errors: valid.errors }, 'invalid status message dropped');
      return;
    }
    const record = this.deps.registry.get(pluginId);
    if (record?.descriptor.type !== 'mqtt') {
      if (valid.value.state === 'online' && !message.retain) await this.requestReregister(pluginId, 'status from an unknown plugin');
      return;
    }
    if (valid.value.state !== 'offline') return; // online is established by registration and heartbeats
    // As for heartbeats and results: only the owner's client (its will included) speaks for the plugin.
    if (message.publisher && message.publisher.role !== 'admin' && record.owner !== ownerOf(message.publisher)) {
      this.deps.log.warn({ plugin_id: pluginId, client: message.publisher.clientId, username: message.publisher.username }, 'status from a non-owner ignored');
      return;
    }
    const current = record.epoch ?? this.heartbeatEpochs.get(pluginId);
    if (current !== undefined && valid.value.epoch < current) {
      // The will of an earlier connection arriving after the plugin re-registered (or rebooted): not news.
      this.counters.stale_wills_ignored++;
      this.deps.log.info({ plugin_id: pluginId, epoch: valid.value.epoch, current }, 'stale will ignored');
      return;
    }
    this.lastSeen.delete(pluginId);
    this.deps.registry.setState(pluginId, 'offline', 'the plugin disconnected (will or offline status)');
  }

  private async onHeartbeat(message: IncomingMessage): Promise<void> {
    const pluginId = parseTopic(message.topic)?.param;
    if (!isPluginId(pluginId)) {
      this.deps.log.warn({ topic: message.topic }, 'heartbeat on an invalid topic dropped');
      return;
    }
    const parsed = parseJsonPayload(message.payload, this.deps.max_payload_bytes);
    const valid = parsed.ok ? validatePayload('heartbeat', parsed.value) : parsed;
    if (!valid.ok) {
      this.deps.log.warn({ plugin_id: pluginId, errors: valid.errors }, 'invalid heartbeat dropped');
      return;
    }
    let record = this.deps.registry.get(pluginId);
    if (record?.descriptor.type !== 'mqtt') {
      return this.requestReregister(pluginId, 'heartbeat from an unregistered plugin');
    }
    if (record.owner === UNCLAIMED_OWNER) {
      // Registered by an administrator for a device that only heartbeats: its first heartbeat claims it.
      if (!this.deps.claimPluginId?.(message.publisher, pluginId, record.owner)) {
        this.deps.log.warn(
          { plugin_id: pluginId, client: message.publisher?.clientId, username: message.publisher?.username },
          'heartbeat for an unclaimed plugin id from a client that may not use it ignored',
        );
        return;
      }
      this.deps.log.info({ plugin_id: pluginId, owner: ownerOf(message.publisher) }, 'plugin id claimed by its device (first heartbeat)');
      record = this.deps.registry.get(pluginId) ?? record;
    }
    if (record.epoch === undefined) {
      const newest = this.heartbeatEpochs.get(pluginId);
      if (newest !== undefined && valid.value.epoch < newest) return; // an old connection's heartbeat
      this.heartbeatEpochs.set(pluginId, valid.value.epoch);
    } else if (valid.value.epoch !== record.epoch) {
      if (valid.value.epoch > record.epoch) return this.requestReregister(pluginId, 'heartbeat from a newer epoch');
      return; // an old connection's heartbeat
    }
    if (record.owner !== ownerOf(message.publisher) && message.publisher) {
      this.deps.log.warn({ plugin_id: pluginId, client: message.publisher.clientId }, 'heartbeat from a non-owner ignored');
      return;
    }
    this.counters.heartbeats++;
    this.lastSeen.set(pluginId, this.now());
    if (record.state === 'stale' || record.state === 'offline') this.deps.registry.setState(pluginId, 'online');
  }

  private async requestReregister(pluginId: string, reason: string): Promise<void> {
    const now = this.now();
    const last = this.lastControl.get(pluginId);
    if (last !== undefined && now - last < CONTROL_COOLDOWN_MS) return;
    this.lastControl.set(pluginId, now);
    this.counters.reregister_sent++;
    this.deps.log.info({ plugin_id: pluginId, reason }, 'asking plugin to re-register');
    await this.deps.bus.publish(topics.control(pluginId), JSON.stringify({ cmd: 'reregister', reason }), { qos: 1 });
  }

  private checkHeartbeats(): void {
    const now = this.now();
    for (const record of this.deps.registry.list()) {
      if (record.descriptor.type !== 'mqtt' || record.state !== 'online') continue;
      const id = record.descriptor.id;
      const interval = record.heartbeat_interval_sec ?? this.deps.liveness.default_heartbeat_interval_sec;
      const seen = this.lastSeen.get(id);
      if (seen === undefined) {
        this.lastSeen.set(id, now);
        continue;
      }
      const silentMs = now - seen;
      if (silentMs > (interval + this.deps.liveness.grace_sec) * 1000) {
        this.deps.registry.setState(id, 'stale', `no heartbeat for ${Math.round(silentMs / 1000)} s (interval ${interval} s)`);
      }
    }
  }
}

/** The id a registration names: `id`, else HomeClaw's `plugin_id`, else its `name` (checked later). */
function registrationIdOf(body: Record<string, unknown>): string | null {
  if (typeof body.id === 'string') return body.id;
  if (typeof body.plugin_id === 'string') return body.plugin_id;
  return typeof body.name === 'string' ? body.name : null;
}
