// Every HTTP route of the Core, registered in one place from the parts it serves. Optional groups
// follow the config: OAuth (oauth.enabled), the OpenAI-compatible endpoint (openai_endpoint.enabled),
// the dashboard's files (dashboard.enabled) and /metrics (metrics.enabled).
import type Database from 'better-sqlite3';
import type { AuditLog } from '../../access/audit-log.js';
import { credentialOwner } from '../../access/plugin-claims.js';
import type { AccessPolicy } from '../../access/policy.js';
import type { UserTokenStore } from '../../access/user-tokens.js';
import type { HealthReport } from '../../adapters/adapter.js';
import type { AdapterMap } from '../../adapters/adapter-map.js';
import type { EmbeddedBrokerHandle } from '../../bus/broker.js';
import type { CoreBus } from '../../bus/core-bus.js';
import type { CredentialStore } from '../../bus/credentials.js';
import { openAiUnauthorized, registerOpenAiRoutes } from '../../channels/openai-endpoint.js';
import { OpenAiSessions } from '../../channels/openai-sessions.js';
import type { CoreConfig } from '../../config/types.js';
import type { ConversationEngine } from '../../conversation/engine.js';
import type { Dispatcher } from '../../dispatch/dispatcher.js';
import type { Logger } from '../../log.js';
import type { CoreMetrics } from '../../observability/core-metrics.js';
import type { Readiness } from '../../observability/readiness.js';
import { topics } from '../../protocol/topics.js';
import type { PluginRecord } from '../../registry/record.js';
import type { Registry } from '../../registry/registry.js';
import { findPluginsTool } from '../../retrieval/mcp-find-plugins.js';
import type { PluginSearchApi } from '../../retrieval/search-api.js';
import type { EventFeed } from '../event-feed.js';
import type { IngressAuth } from '../ingress-auth.js';
import { attachOAuth } from '../oauth/attach.js';
import { listenerAuthority } from '../public-url.js';
import type { HttpServer } from '../server.js';
import type { SqliteProfileStore } from '../../conversation/profile-store.js';
import { registerAdminRoutes } from './admin.js';
import { registerAuditRoutes } from './audit.js';
import { registerDashboardRoutes } from './dashboard.js';
import { registerEventRoutes } from './events.js';
import { registerHealthRoutes } from './health.js';
import { registerMcpRoutes } from './mcp.js';
import { registerMessageRoutes, type MessageRoutesOptions } from './messages.js';
import { registerMetricsRoutes } from './metrics.js';
import { registerOpenApiRoute } from './openapi.js';
import { registerPluginCapabilityRoutes } from './plugin-capabilities.js';
import { registerPluginRoutes, type PluginRoutesDeps } from './plugins.js';
import { registerProfileRoutes } from './profiles.js';
import { registerSearchRoutes } from './search.js';
import { registerStatusRoutes } from './status.js';
import { registerUserRoutes } from './users.js';
import { registerWhoamiRoutes } from './whoami.js';

/** The parts the routes serve. */
export interface CoreRoutesDeps {
  config: CoreConfig;
  log: Logger;
  db: Database.Database;
  adminToken: string;
  ingress: IngressAuth | undefined;
  bus: CoreBus;
  broker: EmbeddedBrokerHandle | undefined;
  registry: Registry;
  dispatcher: Dispatcher;
  adapters: AdapterMap;
  credentials: CredentialStore;
  users: UserTokenStore;
  audit: AuditLog;
  profiles: SqliteProfileStore;
  policy: AccessPolicy;
  search: PluginSearchApi;
  engine: ConversationEngine;
  feed: EventFeed;
  readiness: Readiness;
  metrics: CoreMetrics | undefined;
  status: () => Record<string, unknown>;
  checkTargets: PluginRoutesDeps['checkTargets'];
  /** Whether a channel may carry a message for a user: async replies go only where the user may be written to. */
  mayCarry?: MessageRoutesOptions['mayCarry'];
}

export async function registerRoutes(http: HttpServer, deps: CoreRoutesDeps): Promise<void> {
  const { app } = http;
  const { config, log, registry, dispatcher, policy, search, engine, ingress } = deps;
  registerPluginRoutes(app, {
    registry,
    dispatcher,
    health: (record) => pluginHealth(deps.adapters, record),
    ...(deps.checkTargets ? { checkTargets: deps.checkTargets } : {}),
    transfer: (pluginId, name) => transferPluginId(deps, pluginId, name),
  });
  const { broker } = deps;
  registerAdminRoutes(app, { credentials: deps.credentials, ...(broker ? { disconnectSessions: (name: string) => broker.disconnectUser(name) } : {}) });
  registerUserRoutes(app, { users: deps.users });
  registerAuditRoutes(app, { audit: deps.audit });
  registerProfileRoutes(app, { profiles: deps.profiles });
  registerSearchRoutes(app, { search, mayReach: (userId, record) => policy.mayReachPlugin(userId, record) });
  await registerMessageRoutes(app, {
    engine,
    publishReply: (channel, reply) => deps.bus.publish(topics.channelOut(channel), JSON.stringify(reply), { qos: 1 }),
    onAsyncError: (err, request_id) => log.warn({ err, request_id }, 'async channel reply failed'),
    log: log.child({ room: 'api' }),
    ...(deps.mayCarry ? { mayCarry: deps.mayCarry } : {}),
  });
  registerMcpRoutes(app, {
    registry,
    dispatcher,
    log: log.child({ room: 'api', component: 'mcp' }),
    authorize: http.authorize,
    principalOf: http.principalOf,
    access: policy,
    findPlugins: findPluginsTool(search),
  });
  if (config.oauth.enabled) {
    const listenerHost = (): string => listenerAuthority(app.server, config.http.host, config.http.port);
    attachOAuth({
      http,
      db: deps.db,
      users: deps.users,
      adminToken: deps.adminToken,
      settings: config.oauth,
      public_url: config.http.public_url,
      listenerHost,
      log,
    });
  }
  if (config.openai_endpoint.enabled) {
    const sessions = new OpenAiSessions(deps.db, config.openai_endpoint.session_ttl_sec * 1000);
    registerOpenAiRoutes(app, { engine, sessions, settings: config.openai_endpoint, log });
    http.onUnauthorized(openAiUnauthorized);
  }
  registerOpenApiRoute(app);
  registerWhoamiRoutes(app, ingress ? { ingress } : {});
  registerEventRoutes(app, { feed: deps.feed, log: log.child({ room: 'api', component: 'events' }) });
  registerPluginCapabilityRoutes(app, { registry, requiresConfirmation: (pluginId, capability) => policy.requiresConfirmation(pluginId, capability) });
  if (config.dashboard.enabled) await registerDashboardRoutes(app, { log: log.child({ room: 'api', component: 'dashboard' }) });
  registerHealthRoutes(app, { readiness: deps.readiness });
  if (deps.metrics) {
    registerMetricsRoutes(app, { metrics: deps.metrics, adminToken: deps.adminToken, metricsToken: config.metrics.token, log: log.child({ room: 'api' }) });
  }
  registerStatusRoutes(app, { status: deps.status });
}

/** A live check through the plugin's adapter; without one, what the registry knows. */
async function pluginHealth(adapters: AdapterMap, record: PluginRecord): Promise<HealthReport> {
  const adapter = adapters.get(record.descriptor.type);
  if (adapter?.health) return adapter.health(record);
  return { ok: record.state === 'online', detail: record.state_reason ?? `state ${record.state}` };
}

/** Gives an MQTT plugin's id to a plugin credential (`homeclaw plugins transfer`). */
function transferPluginId(deps: CoreRoutesDeps, pluginId: string, name: string): ReturnType<NonNullable<PluginRoutesDeps['transfer']>> {
  const credential = deps.credentials.get(name);
  if (!credential) return { ok: false, status: 400, error: `no credential "${name}"; create it with: homeclaw credentials add ${name} --role plugin` };
  if (credential.role !== 'plugin')
    return { ok: false, status: 400, error: `credential "${name}" has role ${credential.role}; a plugin id can only go to a plugin credential` };
  const record = deps.registry.get(pluginId);
  if (!record) return { ok: false, status: 404, error: `no plugin "${pluginId}" is registered` };
  if (record.descriptor.type !== 'mqtt')
    return { ok: false, status: 409, error: `plugin "${pluginId}" is a ${record.descriptor.type} plugin; only MQTT plugins log in with a credential` };
  const moved = deps.registry.transfer(pluginId, credentialOwner(name));
  return moved.ok ? { ok: true, owner: moved.record.owner, previous_owner: moved.previous_owner } : { ok: false, status: 409, error: moved.error };
}
