// The composition root: builds every service from config, starts them in order, stops them in reverse.
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { isLoopbackHost } from './bus/acl.js';
import { ownerOf } from './bus/core-bus.js';
import { AuditLog } from './access/audit-log.js';
import { CallerBindings } from './access/caller-bindings.js';
import { ChannelBindings } from './access/channel-bindings.js';
import { credentialOwner, mayClaimPluginId } from './access/plugin-claims.js';
import { AccessPolicy } from './access/policy.js';
import { ensurePrivateFile, preparePrivateDataDir } from './access/private-data-dir.js';
import { accessMode, accessModeNote, accessStatus } from './access/security-status.js';
import { UserTokenStore } from './access/user-tokens.js';
import { registerAuditRoutes } from './api/routes/audit.js';
import { registerUserRoutes } from './api/routes/users.js';
import type { HealthReport, PluginAdapter } from './adapters/adapter.js';
import { MqttAdapter } from './adapters/mqtt.js';
import { createBuiltinLoader } from './adapters/builtin-loader.js';
import { createHttpAdapter } from './adapters/http.js';
import { McpAdapter } from './adapters/mcp.js';
import { createSubprocessAdapter } from './adapters/subprocess.js';
import { SelfTargetGuard } from './adapters/self-target.js';
import { DEFAULT_DESCRIPTOR_FETCH_LIMITS, DescriptorFetcher } from './adapters/descriptor-fetch.js';
import { registerMcpRoutes } from './api/routes/mcp.js';
import { registerMessageRoutes } from './api/routes/messages.js';
import { registerSearchRoutes } from './api/routes/search.js';
import { createConversationEngine } from './conversation/engine.js';
import { createLlmClient } from './conversation/llm-client.js';
import { attachMqttChannels } from './conversation/mqtt-channel.js';
import { PatternReplyInterpreter } from './conversation/reply-interpreter.js';
import { DefaultParameterResolver } from './conversation/resolver.js';
import { findPluginsTool } from './retrieval/mcp-find-plugins.js';
import { createRetrieval, type Retrieval } from './retrieval/retrieval.js';
import { MqttLifecycle } from './liveness/mqtt-lifecycle.js';
import { MqttPathWatch } from './adapters/mqtt-path-watch.js';
import { resolveAdminToken } from './api/admin-token.js';
import { registerPluginRoutes } from './api/routes/plugins.js';
import { registerStatusRoutes } from './api/routes/status.js';
import { startEventFeed, type EventFeed } from './api/event-feed.js';
import { registerOpenApiRoute } from './api/routes/openapi.js';
import { registerHealthRoutes, HEALTH_PATHS } from './api/routes/health.js';
import { registerMetricsRoutes, METRICS_PATH } from './api/routes/metrics.js';
import { CoreMetrics } from './observability/core-metrics.js';
import { DASHBOARD_PUBLIC_PATHS, DASHBOARD_PUBLIC_PREFIXES, registerDashboardRoutes } from './api/routes/dashboard.js';
import { registerEventRoutes } from './api/routes/events.js';
import { registerPluginCapabilityRoutes } from './api/routes/plugin-capabilities.js';
import { registerWhoamiRoutes } from './api/routes/whoami.js';
import { createIngressAuth } from './api/ingress-auth.js';
import { createCoreReadiness } from './observability/core-readiness.js';
import type { Readiness } from './observability/readiness.js';
import { registerAdminRoutes } from './api/routes/admin.js';
import { registerProfileRoutes } from './api/routes/profiles.js';
import { SqliteProfileStore, seedProfiles } from './conversation/profile-store.js';
import { SqlitePendingCallStore } from './conversation/pending-store.js';
import { createHttpServer, type HttpServer } from './api/server.js';
import type { EmbeddedBrokerHandle } from './bus/broker.js';
import { createBus } from './bus/create-bus.js';
import type { CoreBus, PublisherIdentity } from './bus/core-bus.js';
import type { CredentialStore } from './bus/credentials.js';
import { loadConfig, formatConfigErrors, type LoadConfigOptions } from './config/load.js';
import type { CoreConfig } from './config/types.js';
import { Dispatcher } from './dispatch/dispatcher.js';
import { createLogger, type Logger } from './log.js';
import type { PluginRecord } from './registry/record.js';
import { TypedEventBus } from './registry/events.js';
import { Registry } from './registry/registry.js';
import { topics } from './protocol/topics.js';
import { AdapterAttachments } from './adapters/adapter-attachments.js';
import { adapterMap, type AdapterMap } from './adapters/adapter-map.js';
import { startWyomingServer, wyomingSettingsProblems, type WyomingServer } from './channels/wyoming-server.js';
import { openAiUnauthorized, registerOpenAiRoutes } from './channels/openai-endpoint.js';
import { attachOAuth } from './api/oauth/attach.js';
import { listenerAuthority } from './api/public-url.js';
import { OpenAiSessions } from './channels/openai-sessions.js';
import { removeBridgedPlugins, startZigbee2mqtt, zigbee2mqttPayloadCap } from './bridges/zigbee2mqtt/index.js';
import { createPythonBridge } from './bridges/python/bridge.js';
import { SqliteLastChannelStore } from './channels/last-channel-store.js';
import { createNotifier, pluginNotifyPolicy, type Notifier } from './channels/notifier.js';
import { startPluginNotifyListener } from './channels/plugin-notify-listener.js';
import { startTaskScheduler, type TaskScheduler } from './channels/task-scheduler.js';
import { ProfileUpdates } from './conversation/profile-updates.js';
import { defaultTimeZone, isValidTimeZone } from './conversation/system-context.js';
import { createHomeAssistantAdapter, syncHomeAssistantPlugin } from './bridges/homeassistant/bridge.js';
import { attachCallFrontDoor } from './bridges/homeassistant/call-front-door.js';
import { DiscoveryPublisher } from './bridges/homeassistant/discovery/publisher.js';
import { EventLoopMonitor } from './observability/event-loop-monitor.js';

export interface CoreContext {
  config: CoreConfig;
  log: Logger;
  db: Database.Database;
  bus: CoreBus;
  broker?: EmbeddedBrokerHandle;
  registry: Registry;
  dispatcher: Dispatcher;
  credentials: CredentialStore;
  profiles: SqliteProfileStore;
  pendingCalls: SqlitePendingCallStore;
  /** The adapters by plugin type; the dispatcher and the attachments read this same map. */
  adapters: AdapterMap;
  http: HttpServer;
  retrieval: Retrieval;
  /** Delivers messages for users outside a request (plugins' notify, reminders, scheduled tasks). */
  notifier: Notifier;
  /** null when scheduler.enabled is false. */
  scheduler: TaskScheduler | null;
  /** Named up/down checks behind GET /readyz; a room adds its own with readiness.add(name, probe). */
  readiness: Readiness;
  policy: AccessPolicy;
  users: UserTokenStore;
  audit: AuditLog;
  /** The Prometheus metrics behind GET /metrics; absent when metrics.enabled is false. */
  metrics?: CoreMetrics;
}

export interface RunningCore {
  ctx: CoreContext;
  /** Actual ports (useful when the config asked for ephemeral ones). */
  mqttPort: number | null;
  wsPort: number | null;
  httpPort: number;
  httpUrl: string;
  /** Port of the Wyoming conversation agent; null when wyoming.port is not set. */
  wyomingPort: number | null;
  adminToken: string;
  stop(): Promise<void>;
}

export class ConfigError extends Error {}

/** Home Assistant needs an MQTT 5 broker from 2027.1 and cannot share the embedded one (MQTT 3.1.1). */
export const EMBEDDED_DISCOVERY_WARNING =
  'homeassistant.discovery is on but the Core runs its embedded MQTT 3.1.1 broker: Home Assistant will not see the devices ' +
  'unless it connects to this broker, and from 2027.1 it needs an MQTT 5 broker. Set HOMECLAW_BROKER_URL to the broker ' +
  'Home Assistant uses (e.g. the Mosquitto add-on).';

export interface StartCoreOptions extends LoadConfigOptions {
  /** Use this config as is (tests); skips file and environment. */
  config?: CoreConfig;
  log?: Logger;
}

export async function startCore(options: StartCoreOptions = {}): Promise<RunningCore> {
  let config: CoreConfig;
  if (options.config) config = options.config;
  else {
    const loaded = loadConfig(options);
    if (!loaded.ok) throw new ConfigError(`invalid configuration:\n${formatConfigErrors(loaded.errors)}`);
    config = loaded.config;
  }
  const log = options.log ?? createLogger({ level: config.log_level, format: config.log_format });
  const started: { name: string; stop: () => Promise<void> | void }[] = [];
  const stopAll = async (): Promise<void> => {
    for (const { name, stop } of started.reverse()) {
      try {
        await stop();
      } catch (err) {
        log.error({ err, component: name }, 'component failed to stop');
      }
    }
  };

  try {
    preparePrivateDataDir(config.data_dir, log);
    const dbFile = join(config.data_dir, 'homeclaw.db');
    ensurePrivateFile(dbFile);
    const db = new Database(dbFile);
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    started.push({ name: 'database', stop: () => void db.close() });

    let policy: AccessPolicy;
    try {
      policy = new AccessPolicy(config.policy);
    } catch (err) {
      throw new ConfigError(`policy: ${(err as Error).message}`);
    }
    // Stopped after the dispatcher (reverse order), so the endings of cancelled calls are written too.
    const audit = new AuditLog({ db, log: log.child({ room: 'access', component: 'audit' }), ...config.access.audit });
    started.push({ name: 'audit', stop: () => audit.stop() });
    const users = new UserTokenStore(db);

    const events = new TypedEventBus(log);
    const registry = new Registry({ db, events, log: log.child({ room: 'registry' }), limits: config.limits });
    const profiles = new SqliteProfileStore({ db });
    const pendingCalls = new SqlitePendingCallStore({ db });
    if (config.conversation.profiles_file) {
      const seeded = await seedProfiles(profiles, resolve(config.conversation.profiles_file)).catch((err: unknown) => {
        throw new ConfigError(`conversation.profiles_file: ${(err as Error).message}`);
      });
      log.info({ file: config.conversation.profiles_file, ...seeded }, 'profiles seeded');
    }

    // The dispatcher is created before the broker because the broker's ACL asks it who a request went to.
    const adapters = adapterMap();
    // The event feed needs the bus, which needs the dispatcher (ACL): the late binding breaks the cycle.
    let eventFeed: EventFeed | undefined;
    let haDiscovery: DiscoveryPublisher | undefined;
    const metrics = config.metrics.enabled
      ? new CoreMetrics({ registry, log: log.child({ room: 'observability' }), max_series: config.metrics.max_series })
      : undefined;
    if (metrics) started.push({ name: 'metrics', stop: () => metrics.stop() });
    const dispatcher = new Dispatcher({
      registry,
      adapters,
      config: config.dispatch,
      app_id: config.app_id,
      log: log.child({ room: 'dispatch' }),
      onFinished: (record) => {
        eventFeed?.invocationFinished(record);
        haDiscovery?.invocationFinished(record);
        metrics?.invocations.finished(record);
      },
      onRefused: (record) => eventFeed?.invocationRefused(record),
      guard: policy,
      audit: (entry) => {
        audit.record(entry);
        metrics?.invocations.ended(entry);
      },
    });
    started.push({ name: 'dispatcher', stop: () => dispatcher.stop() });

    const created = await createBus({
      config,
      log: log.child({ room: 'bus' }),
      db,
      requestTarget: (requestId) => dispatcher.requestTarget(requestId),
      ownsPluginId: (username, pluginId) => registry.get(pluginId)?.owner === `mqtt:user:${username}`,
      birthPayload: () => JSON.stringify({ online: true, ts: Date.now() }),
      ...(config.zigbee2mqtt.enabled ? { zigbee2mqttBaseTopic: config.zigbee2mqtt.base_topic } : {}),
      payloadCapFor: zigbee2mqttPayloadCap(config.zigbee2mqtt),
    });
    const { bus, broker, credentials } = created;
    started.push({ name: 'bus', stop: () => created.close() });
    if (broker) log.info({ host: broker.host, port: broker.tcpPort, ws_port: broker.wsPort }, 'embedded MQTT broker listening');
    else log.info({ url: redactUrl(config.broker.url ?? '') }, 'connected to external MQTT broker');

    eventFeed = startEventFeed({ bus, registry, log, invocations: config.events.invocations });
    started.push({ name: 'event-feed', stop: () => eventFeed?.stop() });

    // No plugin may call the Core's own HTTP API; the port is known for sure once the API listens.
    let httpPort: number | undefined;
    const selfTarget = new SelfTargetGuard({ port: () => httpPort ?? (config.http.port || undefined) });
    const checkTargets = (descriptor: PluginRecord['descriptor']) => selfTarget.descriptorProblems(descriptor);
    const mqttAdapter = new MqttAdapter({ bus, log: log.child({ room: 'adapters', type: 'mqtt' }), max_payload_bytes: config.broker.max_payload_bytes });
    await mqttAdapter.start();
    // Messages for users outside a request (plugins' notify, reminders, scheduled tasks).
    const lastChannels = new SqliteLastChannelStore(db);
    const notifier = createNotifier({
      bus,
      lastChannels,
      default_channel: config.notifications.default_channel,
      mayNotify: pluginNotifyPolicy(policy, registry),
      log: log.child({ room: 'channels', component: 'notifier' }),
    });
    const pluginNotifications = await startPluginNotifyListener({
      bus,
      registry,
      notifier,
      log: log.child({ room: 'channels', component: 'plugin-notify' }),
      max_payload_bytes: config.broker.max_payload_bytes,
    });
    started.push({ name: 'plugin-notify', stop: () => pluginNotifications.stop() });
    const householdTimezone = config.scheduler.timezone ?? defaultTimeZone();
    if (!isValidTimeZone(householdTimezone)) throw new ConfigError(`scheduler.timezone: unknown time zone "${householdTimezone}"`);

    const python = createPythonBridge({
      registry,
      log: log.child({ room: 'bridges', type: 'python' }),
      roots: [config.plugins.dir, ...config.plugins.extra_dirs],
      hot_reload: config.plugins.hot_reload,
    });
    const loader = createBuiltinLoader({
      dir: config.plugins.dir,
      extra_dirs: config.plugins.extra_dirs,
      data_dir: config.data_dir,
      registry,
      log: log.child({ room: 'adapters', type: 'inline' }),
      hot_reload: config.plugins.hot_reload,
      python: python.folders,
      keep_record: python.ownsRecord,
      notify: (pluginId, notification) => notifier.notify({ ...notification, plugin_id: pluginId }),
      check_targets: checkTargets,
    });
    const httpAdapter = createHttpAdapter({ registry, log: log.child({ room: 'adapters', type: 'http' }), liveness: config.liveness, guard: selfTarget });
    const subprocessAdapter = createSubprocessAdapter({ log: log.child({ room: 'adapters', type: 'subprocess' }) });
    const mcpAdapter = new McpAdapter({ registry, log: log.child({ room: 'adapters', type: 'mcp' }), guard: selfTarget });
    const homeAssistant = { config: config.homeassistant, registry, log };
    const haAdapter = createHomeAssistantAdapter(homeAssistant);
    for (const adapter of [mqttAdapter, loader.adapter, httpAdapter, subprocessAdapter, mcpAdapter, python.adapter, haAdapter].filter(Boolean) as PluginAdapter[]) {
      adapters.set(adapter.type, adapter);
    }
    // Before the adapters attach, so the plugin connects once, with its current settings.
    syncHomeAssistantPlugin(homeAssistant);
    const attachments = new AdapterAttachments({ registry, adapters, log });
    attachments.start();
    started.push({ name: 'adapter-attachments', stop: () => attachments.stop() });
    started.push({ name: 'python-bridge', stop: () => python.stop() });
    await loader.start();
    started.push({ name: 'builtin-loader', stop: () => loader.stop() });
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
    await lifecycle.start();
    started.push({ name: 'mqtt-lifecycle', stop: () => lifecycle.stop() });
    const pathWatch = new MqttPathWatch({ bus, registry, log: log.child({ room: 'adapters', component: 'mqtt-path-watch' }) });
    pathWatch.start();
    started.push({ name: 'mqtt-path-watch', stop: () => pathWatch.stop() });

    if (config.zigbee2mqtt.enabled) {
      const zigbee = await startZigbee2mqtt({
        bus,
        registry,
        config: config.zigbee2mqtt,
        log: log.child({ room: 'bridges', bridge: 'zigbee2mqtt' }),
        max_payload_bytes: config.broker.max_payload_bytes,
      });
      adapters.set(zigbee.adapter.type, zigbee.adapter);
      started.push({ name: 'zigbee2mqtt', stop: () => zigbee.stop() });
    } else {
      removeBridgedPlugins(registry, log.child({ room: 'bridges', bridge: 'zigbee2mqtt' }));
    }

    const retrieval: Retrieval = await createRetrieval({
      config: { ...config.retrieval, data_dir: config.data_dir },
      registry,
      log: log.child({ room: 'retrieval' }),
    });
    // Chroma and the embedding model take seconds to come up; retrieval answers from BM25 meanwhile.
    void retrieval.start().catch((err: unknown) => log.error({ err }, 'retrieval failed to start; continuing on BM25'));
    started.push({ name: 'retrieval', stop: () => retrieval.stop() });
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
        default_timezone: householdTimezone,
      },
      onUserMessage: (key) => lastChannels.remember(key.user_id, key.channel, key.session_id),
      ...(llm
        ? { profileUpdates: new ProfileUpdates({ db, profiles, interpreter: new PatternReplyInterpreter(), ttl_sec: config.conversation.pending_ttl_sec }) }
        : {}),
    });
    let scheduler: TaskScheduler | null = null;
    if (config.scheduler.enabled) {
      scheduler = startTaskScheduler({
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
      const running = scheduler;
      started.push({ name: 'scheduler', stop: () => running.stop() });
    }
    const bindings = new ChannelBindings({ embedded: bus.embedded, configured: config.access.channels, credentialUsers: (channel) => credentials.usersOfChannel(channel) });
    const channels = await attachMqttChannels({
      bus,
      engine,
      log: log.child({ room: 'conversation' }),
      max_payload_bytes: config.broker.max_payload_bytes,
      authorizeSpeaker: (input) => bindings.authorize(input),
    });
    started.push({ name: 'channels', stop: () => channels.stop() });
    const callers = new CallerBindings({ embedded: bus.embedded, configured: config.access.callers.users });
    const frontDoor = await attachCallFrontDoor({ bus, dispatcher, log, max_payload_bytes: config.broker.max_payload_bytes, authorizeCaller: (input) => callers.decide(input) });
    started.push({ name: 'call-front-door', stop: () => frontDoor.stop() });
    if (config.homeassistant.discovery) {
      if (broker) log.warn(EMBEDDED_DISCOVERY_WARNING);
      const discovery = new DiscoveryPublisher({ bus, registry, dispatcher, retrievalStatus: () => retrieval.status(), prefix: config.homeassistant.discovery_prefix, log });
      await discovery.start();
      haDiscovery = discovery;
      started.push({ name: 'homeassistant-discovery', stop: () => discovery.stop() });
    }

    let wyoming: WyomingServer | undefined;
    if (config.wyoming.port !== null) {
      const problems = wyomingSettingsProblems(config.wyoming);
      if (problems.length > 0) throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);
      wyoming = await startWyomingServer({
        settings: { ...config.wyoming, port: config.wyoming.port },
        engine,
        log: log.child({ room: 'channels', channel: 'wyoming' }),
        version: '0.1.0',
      });
      const running = wyoming;
      started.push({ name: 'wyoming', stop: () => running.stop() });
    }

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
    });
    if (ingress) log.info({ proxy: config.dashboard.ingress_proxy }, 'ingress requests from the trusted proxy act as the admin');
    const health = async (record: PluginRecord): Promise<HealthReport> => {
      const adapter = adapters.get(record.descriptor.type);
      if (adapter?.health) return adapter.health(record);
      return { ok: record.state === 'online', detail: record.state_reason ?? `state ${record.state}` };
    };
    registerPluginRoutes(http.app, {
      registry,
      dispatcher,
      health,
      checkTargets,
      transfer: (pluginId, name) => {
        const credential = credentials.get(name);
        if (!credential) return { ok: false, status: 400, error: `no credential "${name}"; create it with: homeclaw credentials add ${name} --role plugin` };
        if (credential.role !== 'plugin') return { ok: false, status: 400, error: `credential "${name}" has role ${credential.role}; a plugin id can only go to a plugin credential` };
        const record = registry.get(pluginId);
        if (!record) return { ok: false, status: 404, error: `no plugin "${pluginId}" is registered` };
        if (record.descriptor.type !== 'mqtt') return { ok: false, status: 409, error: `plugin "${pluginId}" is a ${record.descriptor.type} plugin; only MQTT plugins log in with a credential` };
        const moved = registry.transfer(pluginId, credentialOwner(name));
        return moved.ok ? { ok: true, owner: moved.record.owner, previous_owner: moved.previous_owner } : { ok: false, status: 409, error: moved.error };
      },
    });
    registerAdminRoutes(http.app, { credentials, ...(broker ? { disconnectSessions: (name: string) => broker.disconnectUser(name) } : {}) });
    registerUserRoutes(http.app, { users });
    registerAuditRoutes(http.app, { audit });
    registerProfileRoutes(http.app, { profiles });
    registerSearchRoutes(http.app, { search, mayReach: (userId, record) => policy.mayReachPlugin(userId, record) });
    await registerMessageRoutes(http.app, {
      engine,
      publishReply: (channel, reply) => bus.publish(topics.channelOut(channel), JSON.stringify(reply), { qos: 1 }),
      onAsyncError: (err, request_id) => log.warn({ err, request_id }, 'async channel reply failed'),
    });
    registerMcpRoutes(http.app, {
      registry,
      dispatcher,
      log: log.child({ room: 'api', component: 'mcp' }),
      authorize: http.authorize,
      principalOf: http.principalOf,
      access: policy,
      findPlugins: findPluginsTool(search),
    });
    if (config.oauth.enabled) {
      const listenerHost = (): string => listenerAuthority(http.app.server, config.http.host, config.http.port);
      attachOAuth({ http, db, users, adminToken: token, settings: config.oauth, public_url: config.http.public_url, listenerHost, log });
    }
    if (config.openai_endpoint.enabled) {
      const sessions = new OpenAiSessions(db, config.openai_endpoint.session_ttl_sec * 1000);
      registerOpenAiRoutes(http.app, { engine, sessions, settings: config.openai_endpoint, log });
      http.onUnauthorized(openAiUnauthorized);
    }
    registerOpenApiRoute(http.app);
    registerWhoamiRoutes(http.app, ingress ? { ingress } : {});
    registerEventRoutes(http.app, { feed: eventFeed, log: log.child({ room: 'api', component: 'events' }) });
    registerPluginCapabilityRoutes(http.app, { registry, requiresConfirmation: (pluginId, capability) => policy.requiresConfirmation(pluginId, capability) });
    if (dashboardOn) await registerDashboardRoutes(http.app, { log: log.child({ room: 'api', component: 'dashboard' }) });
    const readiness = createCoreReadiness({
      config,
      log: log.child({ room: 'observability' }),
      bus,
      ...(broker ? { broker } : {}),
      db,
      retrieval,
      registeredPlugins: () => registry.list().length,
    });
    registerHealthRoutes(http.app, { readiness });
    const startedAt = Date.now();
    const embeddedAccess = broker ? { anonymous: broker.anonymousAllowed, loopbackOnly: isLoopbackHost(broker.host) } : null;
    const mode = accessMode(embeddedAccess);
    log[mode === 'credentials' ? 'info' : 'warn']({ access_mode: mode }, accessModeNote(mode));
    const eventLoop = new EventLoopMonitor();
    started.push({ name: 'event-loop-monitor', stop: () => eventLoop.stop() });
    if (metrics) {
      metrics.watch({ ...(bus.traffic ? { traffic: bus.traffic } : {}), ...(broker ? { broker } : {}), dispatcher, retrieval, eventLoop });
      registerMetricsRoutes(http.app, { metrics, adminToken: token, metricsToken: config.metrics.token, log: log.child({ room: 'api' }) });
    }
    registerStatusRoutes(http.app, {
      status: () => ({
        version: '0.1.0',
        uptime_sec: Math.round((Date.now() - startedAt) / 1000),
        broker: broker
          ? { mode: 'embedded', host: broker.host, port: broker.tcpPort, ws_port: broker.wsPort, anonymous: broker.anonymousAllowed }
          : { mode: 'external', url: redactUrl(config.broker.url ?? '') },
        plugins: countByState(registry.list()),
        dispatcher: dispatcher.getStats(),
        mqtt: { ...mqttAdapter.counters, ...lifecycle.counters },
        retrieval: retrieval.status(),
        event_loop: eventLoop.snapshot(),
        llm: config.llm.base_url ? { configured: true, base_url: config.llm.base_url, model: config.llm.model } : { configured: false },
        builtins: loader.status(),
        python: python.status(),
        access: accessStatus({
          embedded: embeddedAccess,
          credentials: credentials.list().length,
          users: users.count(),
          channelBindings: Object.keys(config.access.channels),
          policy: policy.summary(),
          audit: audit.status(),
        }),
      }),
    });
    const listening = await http.listen();
    httpPort = listening.port;
    const httpUrl = listening.url;
    started.push({ name: 'http', stop: () => http.close() });
    log.info({ url: httpUrl }, 'HTTP API listening');

    const ctx: CoreContext = {
      config,
      log,
      db,
      bus,
      ...(broker ? { broker } : {}),
      registry,
      dispatcher,
      credentials,
      profiles,
      pendingCalls,
      adapters,
      http,
      retrieval,
      readiness,
      policy,
      users,
      audit,
      notifier,
      scheduler,
      ...(metrics ? { metrics } : {}),
    };
    log.info({ data_dir: config.data_dir, plugins: registry.list().length }, 'HomeClaw Core started');
    let stopping: Promise<void> | undefined;
    return {
      ctx,
      mqttPort: broker?.tcpPort ?? null,
      wsPort: broker?.wsPort ?? null,
      httpPort,
      httpUrl,
      wyomingPort: wyoming?.port ?? null,
      adminToken: token,
      stop: () => {
        stopping ??= (async () => {
          log.info('HomeClaw Core stopping');
          await stopAll();
          log.flush?.();
        })();
        return stopping;
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

function countByState(records: PluginRecord[]): Record<string, number> {
  const counts: Record<string, number> = { total: records.length, online: 0, stale: 0, offline: 0, error: 0 };
  for (const r of records) counts[r.state] = (counts[r.state] ?? 0) + 1;
  return counts;
}

function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//[redacted]@');
}
