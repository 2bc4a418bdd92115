// The composition root: builds every part of the Core from config, starts the parts in order and stops
// them in reverse (src/lifecycle/part.ts). Routes are registered in api/routes/index.ts and the status
// snapshot is api/status-view.ts; invocations reach the audit log, metrics, event feed and Home
// Assistant discovery as one typed event, `invocation.finished`, on the Core's event bus.
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { isLoopbackHost } from './bus/acl.js';
import { ownerOf } from './bus/core-bus.js';
import { AuditLog } from './access/audit-log.js';
import { credentialOwner, mayClaimPluginId } from './access/plugin-claims.js';
import { AccessPolicy } from './access/policy.js';
import { ensurePrivateFile, preparePrivateDataDir } from './access/private-data-dir.js';
import { accessMode, accessModeNote } from './access/security-status.js';
import { UserTokenStore } from './access/user-tokens.js';
import { buildCoreAdapters, checkTargets } from './adapters/core-adapters.js';
import { SelfTargetGuard } from './adapters/self-target.js';
import { DEFAULT_DESCRIPTOR_FETCH_LIMITS, DescriptorFetcher } from './adapters/descriptor-fetch.js';
import { AdapterAttachments } from './adapters/adapter-attachments.js';
import { adapterMap } from './adapters/adapter-map.js';
import { MqttPathWatch } from './adapters/mqtt-path-watch.js';
import { createConversationEngine } from './conversation/engine.js';
import { createLlmClient } from './conversation/llm-client.js';
import { PatternReplyInterpreter } from './conversation/reply-interpreter.js';
import { DefaultParameterResolver } from './conversation/resolver.js';
import { createRetrieval, type Retrieval } from './retrieval/retrieval.js';
import { MqttLifecycle } from './liveness/mqtt-lifecycle.js';
import { resolveAdminToken } from './api/admin-token.js';
import { startEventFeed } from './api/event-feed.js';
import { HEALTH_PATHS } from './api/routes/health.js';
import { METRICS_PATH } from './api/routes/metrics.js';
import { DASHBOARD_PUBLIC_PATHS, DASHBOARD_PUBLIC_PREFIXES } from './api/routes/dashboard.js';
import { registerRoutes } from './api/routes/index.js';
import { statusView } from './api/status-view.js';
import { v8HelperThreads } from './lifecycle/v8-helper-threads.js';
import { CoreMetrics } from './observability/core-metrics.js';
import { createIngressAuth } from './api/ingress-auth.js';
import { createCoreReadiness } from './observability/core-readiness.js';
import { SqliteProfileStore, seedProfiles } from './conversation/profile-store.js';
import { SqlitePendingCallStore } from './conversation/pending-store.js';
import { createHttpServer } from './api/server.js';
import { createBus } from './bus/create-bus.js';
import type { PublisherIdentity } from './bus/core-bus.js';
import { loadConfig, formatConfigErrors } from './config/load.js';
import { ConfigError, type CoreContext, type RunningCore, type StartCoreOptions } from './lifecycle/core-context.js';
import { startFrontDoors } from './lifecycle/front-doors.js';
import type { CoreConfig } from './config/types.js';
import { Dispatcher } from './dispatch/dispatcher.js';
import type { CoreEvents } from './dispatch/invocation-events.js';
import { PartRunner, runningPart } from './lifecycle/part.js';
import { createLogger } from './log.js';
import { TypedEventBus } from './registry/events.js';
import { Registry } from './registry/registry.js';
import { removeBridgedPlugins, startZigbee2mqtt, zigbee2mqttPayloadCap } from './bridges/zigbee2mqtt/index.js';
import { SqliteLastChannelStore } from './channels/last-channel-store.js';
import { createNotifier, pluginNotifyPolicy } from './channels/notifier.js';
import { NotificationBudget } from './channels/notification-budget.js';
import { startPluginNotifyListener } from './channels/plugin-notify-listener.js';
import { startTaskScheduler, type TaskScheduler } from './channels/task-scheduler.js';
import { ProfileUpdates } from './conversation/profile-updates.js';
import { defaultTimeZone, isValidTimeZone } from './conversation/system-context.js';
import { syncHomeAssistantPlugin } from './bridges/homeassistant/bridge.js';
import { EventLoopMonitor } from './observability/event-loop-monitor.js';
import { redactUrl } from './kit/redact-url.js';
import { ChannelBindings } from './access/channel-bindings.js';
import { lockDataDir } from './lifecycle/data-dir-lock.js';

export { ConfigError, EMBEDDED_DISCOVERY_WARNING, type CoreContext, type RunningCore, type StartCoreOptions } from './lifecycle/core-context.js';

export async function startCore(options: StartCoreOptions = {}): Promise<RunningCore> {
  let config: CoreConfig;
  if (options.config) config = options.config;
  else {
    const loaded = loadConfig(options);
    if (!loaded.ok) throw new ConfigError(`invalid configuration:\n${formatConfigErrors(loaded.errors)}`);
    config = loaded.config;
  }
  const log = options.log ?? createLogger({ level: config.log_level, format: config.log_format });
  const parts = new PartRunner(log);

  try {
    // First, before anything in the folder is touched: one Core per data directory.
    const dataDirLock = lockDataDir(config.data_dir);
    await parts.start(runningPart('data-dir-lock', () => dataDirLock.release()));
    preparePrivateDataDir(config.data_dir, log);
    const dbFile = join(config.data_dir, 'homeclaw.db');
    ensurePrivateFile(dbFile);
    const db = new Database(dbFile);
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    await parts.start(runningPart('database', () => void db.close()));

    let policy: AccessPolicy;
    try {
      policy = new AccessPolicy(config.policy);
    } catch (err) {
      throw new ConfigError(`policy: ${(err as Error).message}`);
    }
    // The Core's one typed event bus: the registry's plugin events and every finished invocation.
    const events = new TypedEventBus<CoreEvents>(log);
    // Stopped after the dispatcher (reverse order), so the endings of cancelled calls are written too.
    const audit = new AuditLog({ db, log: log.child({ room: 'access', component: 'audit' }), ...config.access.audit });
    await parts.start({ name: 'audit', start: () => audit.follow(events), stop: () => audit.stop() });
    const users = new UserTokenStore(db);

    const registry = new Registry({ db, events, log: log.child({ room: 'registry' }), limits: config.limits });
    const profiles = new SqliteProfileStore({ db });
    const pendingCalls = new SqlitePendingCallStore({ db });
    if (config.conversation.profiles_file) {
      const seeded = await seedProfiles(profiles, resolve(config.conversation.profiles_file)).catch((err: unknown) => {
        throw new ConfigError(`conversation.profiles_file: ${(err as Error).message}`);
      });
      log.info({ file: config.conversation.profiles_file, ...seeded }, 'profiles seeded');
    }

    const metrics = config.metrics.enabled
      ? new CoreMetrics({ registry, log: log.child({ room: 'observability' }), max_series: config.metrics.max_series, events })
      : undefined;
    if (metrics) await parts.start(runningPart('metrics', () => metrics.stop()));
    // The dispatcher is created before the broker because the broker's ACL asks it who a request went to.
    // It reads the one adapter map, filled below once the bus the adapters need exists.
    const adapters = adapterMap();
    const dispatcher = new Dispatcher({
      registry,
      adapters,
      config: config.dispatch,
      app_id: config.app_id,
      log: log.child({ room: 'dispatch' }),
      guard: policy,
      events,
    });
    await parts.start(runningPart('dispatcher', () => dispatcher.stop()));

    const created = await createBus({
      config,
      log: log.child({ room: 'bus' }),
      db,
      requestTarget: (requestId) => dispatcher.requestTarget(requestId),
      ownsPluginId: (username, pluginId) => registry.get(pluginId)?.owner === credentialOwner(username),
      pluginOwner: (pluginId) => registry.get(pluginId)?.owner,
      birthPayload: () => JSON.stringify({ online: true, ts: Date.now() }),
      ...(config.zigbee2mqtt.enabled ? { zigbee2mqttBaseTopic: config.zigbee2mqtt.base_topic } : {}),
      payloadCapFor: zigbee2mqttPayloadCap(config.zigbee2mqtt),
    });
    const { bus, broker, credentials } = created;
    await parts.start(runningPart('bus', () => created.close()));
    if (broker) log.info({ host: broker.host, port: broker.tcpPort, ws_port: broker.wsPort }, 'embedded MQTT broker listening');
    else log.info({ url: redactUrl(config.broker.url ?? '') }, 'connected to external MQTT broker');

    const eventFeed = startEventFeed({ bus, registry, events, log, invocations: config.events.invocations });
    await parts.start(runningPart('event-feed', () => eventFeed.stop()));

    // No plugin may call the Core's own HTTP API; the port is known for sure once the API listens.
    let httpPort: number | undefined;
    const selfTarget = new SelfTargetGuard({ port: () => httpPort ?? (config.http.port || undefined) });
    // Messages for users outside a request (plugins' notify, reminders, scheduled tasks).
    const lastChannels = new SqliteLastChannelStore(db);
    // Who each channel may carry messages for; the front doors decide who it may speak for from the same bindings.
    const channelBindings = new ChannelBindings({
      embedded: bus.embedded,
      configured: config.access.channels,
      credentialUsers: (channel) => credentials.usersOfChannel(channel),
      boundUsers: (channel) => credentials.boundUsersOfChannel(channel),
    });
    const notifier = createNotifier({
      bus,
      lastChannels,
      mayCarry: (channel, userId) => channelBindings.mayCarry(channel, userId),
      default_channel: config.notifications.default_channel,
      mayNotify: pluginNotifyPolicy(policy, registry),
      budget: new NotificationBudget(config.notifications.max_per_minute),
      log: log.child({ room: 'channels', component: 'notifier' }),
    });
    const notifyDeps = {
      bus,
      registry,
      notifier,
      log: log.child({ room: 'channels', component: 'plugin-notify' }),
      max_payload_bytes: config.broker.max_payload_bytes,
    };
    const pluginNotifications = await startPluginNotifyListener(notifyDeps);
    await parts.start(runningPart('plugin-notify', () => pluginNotifications.stop()));
    const householdTimezone = config.scheduler.timezone ?? defaultTimeZone();
    if (!isValidTimeZone(householdTimezone)) throw new ConfigError(`scheduler.timezone: unknown time zone "${householdTimezone}"`);

    // Every adapter is built the same way and goes into the one map; the dispatcher stops them.
    const built = buildCoreAdapters({ config, registry, bus, log, selfTarget, notifier });
    const { loader, python } = built;
    for (const adapter of built.all) adapters.set(adapter.type, adapter);
    await parts.start({ name: 'mqtt-adapter', start: () => built.mqtt.start(), stop: () => undefined });
    // Before the adapters attach, so the plugin connects once, with its current settings.
    syncHomeAssistantPlugin({ config: config.homeassistant, registry, log });
    const attachments = new AdapterAttachments({ registry, adapters, log });
    await parts.start({ name: 'adapter-attachments', start: () => attachments.start(), stop: () => attachments.stop() });
    await parts.start(runningPart('python-bridge', () => python.stop()));
    await parts.start({ name: 'builtin-loader', start: () => loader.start(), stop: () => loader.stop() });
    await python.embedded.start();

    // A plugin credential names the ids it may claim, plus ids transferred to it; anonymous (loopback) and
    // admin clients may claim any.
    const mayUsePluginId = (publisher: PublisherIdentity | undefined, pluginId: string): boolean =>
      publisher?.role !== 'plugin' || (publisher.pluginIds ?? []).includes(pluginId) || registry.get(pluginId)?.owner === ownerOf(publisher);
    const lifecycle = new MqttLifecycle({
      bus,
      registry,
      log: log.child({ room: 'registry', component: 'mqtt-lifecycle' }),
      liveness: config.liveness,
      max_payload_bytes: config.broker.max_payload_bytes,
      mayUsePluginId,
      claimPluginId: (publisher, pluginId, currentOwner) =>
        mayClaimPluginId(currentOwner, publisher, pluginId) && registry.transfer(pluginId, ownerOf(publisher)).ok,
      // Registration by reference: the same guard as HTTP plugins, so a device cannot point it at the Core.
      descriptorFetcher: new DescriptorFetcher(selfTarget, { ...DEFAULT_DESCRIPTOR_FETCH_LIMITS, max_bytes: config.broker.max_payload_bytes }),
    });
    await parts.start({ name: 'mqtt-lifecycle', start: () => lifecycle.start(), stop: () => lifecycle.stop() });
    const pathWatch = new MqttPathWatch({ bus, registry, log: log.child({ room: 'adapters', component: 'mqtt-path-watch' }) });
    await parts.start({ name: 'mqtt-path-watch', start: () => pathWatch.start(), stop: () => pathWatch.stop() });

    if (config.zigbee2mqtt.enabled) {
      const zigbee = await startZigbee2mqtt({
        bus,
        registry,
        config: config.zigbee2mqtt,
        log: log.child({ room: 'bridges', bridge: 'zigbee2mqtt' }),
        max_payload_bytes: config.broker.max_payload_bytes,
      });
      adapters.set(zigbee.adapter.type, zigbee.adapter);
      await parts.start(runningPart('zigbee2mqtt', () => zigbee.stop()));
    } else {
      removeBridgedPlugins(registry, log.child({ room: 'bridges', bridge: 'zigbee2mqtt' }));
    }

    const retrieval: Retrieval = await createRetrieval({
      config: { ...config.retrieval, data_dir: config.data_dir },
      registry,
      log: log.child({ room: 'retrieval' }),
    });
    // Chroma and the embedding model take seconds to come up; retrieval answers from BM25 meanwhile.
    const startRetrieval = (): void => void retrieval.start().catch((err: unknown) => log.error({ err }, 'retrieval failed to start; continuing on BM25'));
    await parts.start({ name: 'retrieval', start: startRetrieval, stop: () => retrieval.stop() });
    // Every search and LLM request goes through these, so metrics count them in one place.
    const search = metrics ? metrics.meterSearch(retrieval, config.retrieval.enabled) : retrieval;
    const llmClient = createLlmClient(config.llm);
    // The metered client for the conversation and the scheduler's post-processing alike.
    const llm = llmClient && metrics ? metrics.meterLlm(llmClient) : llmClient;
    const engine = createConversationEngine({
      llm,
      retrieval: search,
      dispatcher,
      registry,
      resolver: new DefaultParameterResolver(),
      pending: pendingCalls,
      interpreter: new PatternReplyInterpreter(),
      profiles,
      log: log.child({ room: 'conversation' }),
      access: policy,
      settings: {
        top_k: config.retrieval.top_k,
        max_rounds: config.llm.max_rounds,
        pending_ttl_sec: config.conversation.pending_ttl_sec,
        no_llm_threshold: config.conversation.no_llm_threshold,
        max_text_bytes: config.conversation.max_text_bytes,
        max_messages_per_minute: config.conversation.max_messages_per_minute,
        default_timezone: householdTimezone,
      },
      onUserMessage: (key) => lastChannels.remember(key.user_id, key.channel, key.session_id),
      ...(llm
        ? { profileUpdates: new ProfileUpdates({ db, profiles, interpreter: new PatternReplyInterpreter(), ttl_sec: config.conversation.pending_ttl_sec }) }
        : {}),
    });
    let scheduler: TaskScheduler | null = null;
    if (config.scheduler.enabled) {
      const running = startTaskScheduler({
        db,
        registry,
        dispatcher,
        notifier,
        llm,
        log: log.child({ room: 'channels', component: 'scheduler' }),
        timezone: householdTimezone,
        default_user: config.scheduler.user_id,
        default_channel: config.scheduler.channel,
      });
      scheduler = running;
      await parts.start(runningPart('scheduler', () => running.stop()));
    }
    const { wyoming } = await startFrontDoors({ config, log, parts, created, engine, dispatcher, registry, retrieval, events });

    const { token } = resolveAdminToken(config.data_dir, config.http.admin_token);
    const ingress = config.dashboard.ingress_proxy ? createIngressAuth(config.dashboard.ingress_proxy) : undefined;
    const dashboardOn = config.dashboard.enabled;
    const http = createHttpServer({
      host: config.http.host,
      port: config.http.port,
      token,
      log,
      publicPaths: [...HEALTH_PATHS, ...(metrics ? [METRICS_PATH] : []), ...(dashboardOn ? DASHBOARD_PUBLIC_PATHS : [])],
      userTokens: users,
      ...(dashboardOn ? { publicPrefixes: DASHBOARD_PUBLIC_PREFIXES } : {}),
      ...(ingress ? { ingress } : {}),
      maxConnectionsPerAddress: config.http.max_connections_per_address,
      maxConnections: config.http.max_connections,
    });
    if (ingress) log.info({ proxy: config.dashboard.ingress_proxy }, 'ingress requests from the trusted proxy act as the admin');
    const readiness = createCoreReadiness({
      config,
      log: log.child({ room: 'observability' }),
      bus,
      ...(broker ? { broker } : {}),
      db,
      retrieval,
      registeredPlugins: () => registry.list().length,
    });
    const eventLoop = new EventLoopMonitor();
    await parts.start(runningPart('event-loop-monitor', () => eventLoop.stop()));
    metrics?.watch({ ...(bus.traffic ? { traffic: bus.traffic } : {}), ...(broker ? { broker } : {}), dispatcher, retrieval, eventLoop });
    const embeddedAccess = broker ? { anonymous: broker.anonymousAllowed, loopbackOnly: isLoopbackHost(broker.host) } : null;
    const status = statusView({
      config,
      startedAt: Date.now(),
      broker,
      embeddedAccess,
      plugins: () => registry.list(),
      dispatcher,
      mqtt: () => ({ ...built.mqtt.counters, ...lifecycle.counters }),
      retrieval,
      eventLoop,
      v8HelperThreads: v8HelperThreads(process.execArgv, process.env['NODE_OPTIONS']),
      builtins: loader,
      python,
      access: { credentials: () => credentials.list().length, users: () => users.count(), policy: () => policy.summary(), audit: () => audit.status() },
    });
    const routeParts = {
      config,
      log,
      db,
      bus,
      broker,
      registry,
      dispatcher,
      adapters,
      credentials,
      users,
      audit,
      profiles,
      policy,
      search,
      engine,
      readiness,
      metrics,
      status,
    };
    await registerRoutes(http, {
      ...routeParts,
      adminToken: token,
      ingress,
      feed: eventFeed,
      checkTargets: (descriptor) => checkTargets(selfTarget, descriptor),
      mayCarry: (channel, userId) => channelBindings.mayCarry(channel, userId),
    });
    const mode = accessMode(embeddedAccess);
    log[mode === 'credentials' ? 'info' : 'warn']({ access_mode: mode }, accessModeNote(mode));
    let httpUrl = '';
    await parts.start({
      name: 'http',
      start: async () => {
        const listening = await http.listen();
        httpPort = listening.port;
        httpUrl = listening.url;
      },
      stop: () => http.close(),
    });
    log.info({ url: httpUrl }, 'HTTP API listening');

    const ctx: CoreContext = {
      ...{ config, log, db, bus, registry, dispatcher, credentials, profiles, pendingCalls, adapters, http, retrieval, readiness },
      ...{ policy, users, audit, notifier, scheduler },
      ...(broker ? { broker } : {}),
      ...(metrics ? { metrics } : {}),
    };
    log.info({ data_dir: config.data_dir, plugins: registry.list().length }, 'HomeClaw Core started');
    let stopping: Promise<void> | undefined;
    return {
      ctx,
      mqttPort: broker?.tcpPort ?? null,
      wsPort: broker?.wsPort ?? null,
      httpPort: httpPort ?? 0,
      httpUrl,
      wyomingPort: wyoming?.port ?? null,
      adminToken: token,
      stop: () => {
        stopping ??= (async () => {
          log.info('HomeClaw Core stopping');
          await parts.stopAll();
          log.flush?.();
        })();
        return stopping;
      },
    };
  } catch (err) {
    await parts.stopAll();
    throw err;
  }
}
