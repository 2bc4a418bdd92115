// Picks the Core's bus from the config: the embedded Aedes broker, or a client of an external broker.
import type Database from 'better-sqlite3';
import type { CoreConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import { credentialOwner, isAnonymousOwner, UNCLAIMED_OWNER } from '../access/plugin-claims.js';
import type { AclContext } from './acl.js';
import { startEmbeddedBroker, type EmbeddedBrokerHandle } from './broker.js';
import { ClientIdStore } from './client-id-claims.js';
import type { CoreBus } from './core-bus.js';
import { CredentialStore } from './credentials.js';
import { EmbeddedBus } from './embedded-bus.js';
import { ExternalBus } from './external-bus.js';

export interface CreateBusOptions {
  config: CoreConfig;
  log: Logger;
  db: Database.Database;
  /** From the dispatcher: the plugin a pending request went to (embedded ACL on result topics). */
  requestTarget?: AclContext['requestTarget'];
  /** Extra plugin ids a credential owns beyond its plugin_ids (embedded ACL). */
  ownsPluginId?: AclContext['ownsPluginId'];
  /** The registry's owner of a plugin id (`mqtt:user:<login>` ...), undefined when it is not registered. */
  pluginOwner?: (pluginId: string) => string | undefined;
  /**
   * WebSocket port override: 0 = ephemeral, null = disabled. Default: config.broker.ws_port, where 0
   * means disabled.
   */
  wsPort?: number | null;
  /** Embedded mode: Zigbee2MQTT's base topic when the bridge is on (the zigbee2mqtt credential role's tree). */
  zigbee2mqttBaseTopic?: string;
  /** Embedded mode: a larger size cap for particular topics (see EmbeddedBrokerOptions). */
  payloadCapFor?: (topic: string) => number | undefined;
  /** External mode: payload of the retained will on the Core status topic ({online:false, ts}). */
  willPayload?: () => string;
  /** External mode: payload of the retained birth republished after every reconnect ({online:true, ts}). */
  birthPayload?: () => string;
}

export interface CreatedBus {
  bus: CoreBus;
  /** Present in embedded mode. */
  broker?: EmbeddedBrokerHandle;
  credentials: CredentialStore;
  /** Closes the bus, then the embedded broker (disconnecting every client), in that order. */
  close(): Promise<void>;
}

const defaultWill = (): string => JSON.stringify({ online: false, ts: Date.now() });

export async function createBus(options: CreateBusOptions): Promise<CreatedBus> {
  const { config, log } = options;
  const credentials = new CredentialStore(options.db);

  if (config.broker.url) {
    const bus = await ExternalBus.connect({
      url: config.broker.url,
      username: config.broker.username,
      password: config.broker.password,
      protocolVersion: config.broker.protocol_version === '3.1.1' ? 4 : 5,
      log,
      willPayload: options.willPayload ?? defaultWill,
      birthPayload: options.birthPayload,
    });
    return { bus, credentials, close: () => bus.close() };
  }

  const wsPort = options.wsPort !== undefined ? options.wsPort : config.broker.ws_port === 0 ? null : config.broker.ws_port;
  const clientIdHolders = new ClientIdStore(options.db);
  // A removed credential's client ids are free again; a re-added one with the same name starts afresh.
  credentials.onChanged((name, change) => {
    if (change !== 'removed') return;
    try {
      clientIdHolders.releaseLogin(name);
    } catch (error) {
      // Harmless: a claim whose credential no longer exists is ignored at the next connect anyway.
      log.warn({ name, err: error }, 'client ids of a removed credential not released');
    }
  });
  const ownsPlugin = (login: string, pluginId: string): boolean => {
    const owner = options.pluginOwner?.(pluginId);
    if (owner !== undefined && owner !== UNCLAIMED_OWNER && !isAnonymousOwner(owner)) return owner === credentialOwner(login);
    return credentials.get(login)?.plugin_ids.includes(pluginId) ?? false;
  };
  const broker = await startEmbeddedBroker({
    host: config.broker.host,
    port: config.broker.port,
    wsPort,
    wsAllowedOrigins: config.broker.ws_allowed_origins,
    allowAnonymous: config.broker.allow_anonymous,
    maxPayloadBytes: config.broker.max_payload_bytes,
    credentials,
    clientIds: { holders: clientIdHolders, ownsPlugin },
    login: config.broker.login,
    maxConnectionsPerLogin: config.broker.login.max_connections,
    acl: {
      requestTarget: options.requestTarget,
      ownsPluginId: options.ownsPluginId,
      ...(options.zigbee2mqttBaseTopic !== undefined ? { zigbee2mqttBaseTopic: options.zigbee2mqttBaseTopic } : {}),
    },
    ...(options.payloadCapFor ? { payloadCapFor: options.payloadCapFor } : {}),
    log,
  });
  const bus = new EmbeddedBus({ broker, log });
  return {
    bus,
    broker,
    credentials,
    close: async () => {
      await bus.close();
      await broker.close();
    },
  };
}
