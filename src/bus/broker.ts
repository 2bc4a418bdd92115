// The embedded Aedes broker: TCP and WebSocket listeners with TCP_NODELAY, authentication against the
// credential store, and the ACL of acl.ts on every publish and subscribe.
import { createServer, Socket, type AddressInfo, type Server } from 'node:net';
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { Aedes, type AedesPublishPacket, type AuthenticateError, type Client, type PublishPacket } from 'aedes';
import { WebSocketServer, createWebSocketStream } from 'ws';
import type { Logger } from '../log.js';
import { PublishTurns } from './publish-turns.js';
import { PendingConnections } from './pending-connections.js';
import { LogWindow } from '../kit/log-window.js';
import { anonymousAllowed, authorizePublishTopic, authorizeSubscribeFilter, type AclContext, type AnonymousSetting, type ClientIdentity } from './acl.js';
import { mayUseClientId, takesBackOwnSdkId, type ClientIdHolders } from './client-id-claims.js';
import { mayOpenMqttWebSocket } from './websocket-origin.js';
import type { CredentialVerifier } from './credentials.js';
import { LoginConnections } from './login-connections.js';
import { LoginGuard, type LoginLimits } from './login-guard.js';
import { isCommandTopic } from '../protocol/topics.js';
import { keepOnlyGrantedSubscriptions, type SubscriptionPersistence } from './persisted-subscriptions.js';
import { guardFirstPacket, MAX_FIRST_PACKET_BYTES } from './first-packet-guard.js';

export interface EmbeddedBrokerOptions {
  /** TCP listener address; default 127.0.0.1. */
  host?: string;
  /** TCP port; 0 picks a free one (see handle.tcpPort). */
  port: number;
  /** WebSocket port: 0 picks a free one, null or undefined disables the listener. */
  wsPort?: number | null;
  /** WebSocket listener address; defaults to host. */
  wsHost?: string;
  /** Web page origins allowed to open MQTT over WebSocket; an upgrade from any other page is refused. */
  wsAllowedOrigins?: readonly string[];
  allowAnonymous: AnonymousSetting;
  /** The Core's payload limit; the broker drops anything above HARD_CAP_FACTOR times it. */
  maxPayloadBytes: number;
  /** Without a verifier, every login with a username is refused. */
  credentials?: CredentialVerifier;
  /** Backoff, concurrency and cache of password checks (defaults: DEFAULT_LOGIN_LIMITS). */
  login?: Partial<LoginLimits>;
  /** Connections one login may hold at once (default DEFAULT_MAX_CONNECTIONS_PER_LOGIN). */
  maxConnectionsPerLogin?: number;
  acl?: AclContext;
  /**
   * Client ids bound to the login that first used them (client-id-claims.ts), and who owns a plugin id
   * now (the SDK's id follows a transferred plugin). Without it only a connected client's id is protected.
   */
  clientIds?: { holders: ClientIdHolders; ownsPlugin: (login: string, pluginId: string) => boolean };
  log: Logger;
  /**
   * A larger size cap for particular topics (Zigbee2MQTT's device list outgrows the usual cap on a big
   * network); undefined keeps the usual maxPayloadBytes × HARD_CAP_FACTOR.
   */
  payloadCapFor?: (topic: string) => number | undefined;
  /** Only for tests that prove what TCP_NODELAY is worth; always true in the Core. */
  noDelay?: boolean;
}

export interface EmbeddedBrokerHandle {
  readonly aedes: Aedes;
  readonly host: string;
  readonly tcpPort: number;
  /** null when the WebSocket listener is disabled. */
  readonly wsPort: number | null;
  readonly anonymousAllowed: boolean;
  /** Identity of a connected (or just disconnected) client, as authenticated. */
  identityOf(client: Client): ClientIdentity | undefined;
  /** True for a publish the ACL or the size cap refused: it is acknowledged but delivered to nobody. */
  isDropped(packet: Pick<PublishPacket, 'payload'>): boolean;
  /** Closes every live session that logged in with this username (a removed or rotated credential). */
  disconnectUser(username: string): number;
  /**
   * The message carrying this payload buffer goes only to the given login (client id when anonymous);
   * anonymous and admin clients, who may read anything, still receive it.
   */
  deliverOnlyTo(payload: Buffer, recipient: DeliveryRecipient): void;
  close(): Promise<void>;
}

export interface DeliveryRecipient {
  clientId: string;
  username?: string;
}

/** Publishes above maxPayloadBytes × this are dropped at the broker; smaller ones reach the Core's checks. */
export const HARD_CAP_FACTOR = 4;

const RETURN_CODE_IDENTIFIER_REJECTED = 2;
const RETURN_CODE_SERVER_UNAVAILABLE = 3;
const RETURN_CODE_BAD_CREDENTIALS = 4;
const RETURN_CODE_NOT_AUTHORIZED = 5;

function authError(message: string, returnCode: number): AuthenticateError {
  return Object.assign(new Error(message), { returnCode }) as AuthenticateError;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Where a client connects from: the TCP peer, or the socket under a WebSocket upgrade. */
function remoteAddressOf(client: Client): string | undefined {
  const conn = client.conn as { remoteAddress?: string } | undefined;
  return conn?.remoteAddress ?? client.req?.socket?.remoteAddress;
}

export async function startEmbeddedBroker(options: EmbeddedBrokerOptions): Promise<EmbeddedBrokerHandle> {
  const log = options.log.child({ component: 'broker' });
  const host = options.host ?? '127.0.0.1';
  const wsHost = options.wsHost ?? host;
  const wsEnabled = options.wsPort !== null && options.wsPort !== undefined;
  const noDelay = options.noDelay ?? true;
  const hardCap = options.maxPayloadBytes * HARD_CAP_FACTOR;
  const acl = options.acl ?? {};
  const listenerHosts = wsEnabled ? [host, wsHost] : [host];
  const anonymous = anonymousAllowed(options.allowAnonymous, listenerHosts);

  const identities = new WeakMap<Client, ClientIdentity>();
  const guard = options.credentials ? new LoginGuard(options.credentials, log, options.login) : undefined;
  const loginConnections = new LoginConnections<Client>(options.maxConnectionsPerLogin);
  // A refused publish cannot be refused on the wire in MQTT 3.1.1 without dropping the connection, which
  // would punish a plugin for a merely late result. So it is acknowledged and its payload is replaced by a
  // unique empty marker that authorizeForward and the Core's bus recognise and deliver to nobody.
  const droppedPayloads = new WeakSet<Buffer>();
  /** Payloads of messages meant for one recipient only (see deliverOnlyTo). */
  const recipients = new WeakMap<Buffer, DeliveryRecipient>();
  const mayReceive = (client: Client, payload: unknown): boolean => {
    const recipient = Buffer.isBuffer(payload) ? recipients.get(payload) : undefined;
    if (!recipient) return true;
    const identity = identities.get(client);
    if (!identity) return false;
    if (identity.role === undefined || identity.role === 'admin') return true;
    return recipient.username !== undefined ? identity.username === recipient.username : identity.clientId === recipient.clientId;
  };
  /** Clients already told about a retained command (logged once per connection, not per message). */
  const retainWarned = new WeakSet<Client>();

  const drop = (packet: PublishPacket): void => {
    const marker = Buffer.alloc(0);
    droppedPayloads.add(marker);
    packet.payload = marker;
    packet.retain = false;
  };

  /** Refusals repeated by one client or address are logged once per window, with the count left out. */
  const warnings = new LogWindow();
  const warnPerClient = (client: Client, kind: string, detail: Record<string, unknown>, message: string): void =>
    warnings.warn(log, `${kind}\u0000${client.id}`, detail, message);

  /** The publish checks: size, authentication, retained commands, the ACL. A refused message is dropped, not refused on the wire. */
  const authorizePublish = (client: Client, packet: PublishPacket, done: (error: Error | null) => void): void => {
    const identity = identities.get(client);
    const size = packet.payload?.length ?? 0;
    const cap = options.payloadCapFor?.(packet.topic) ?? hardCap;
    if (size > cap) {
      warnPerClient(client, 'oversized', { clientId: client.id, topic: packet.topic, bytes: size, limit: cap }, 'oversized publish dropped');
      drop(packet);
      return done(null);
    }
    if (!identity) {
      warnPerClient(client, 'unauthenticated', { clientId: client.id, topic: packet.topic }, 'publish from unauthenticated client dropped');
      drop(packet);
      return done(null);
    }
    if (packet.retain && isCommandTopic(packet.topic)) {
      // A stored command would be replayed on every subscription: deliver it once, store nothing.
      packet.retain = false;
      if (!retainWarned.has(client)) {
        retainWarned.add(client);
        log.warn({ clientId: client.id, topic: packet.topic }, 'retain flag on a command ignored: commands are never stored');
      }
    }
    const decision = authorizePublishTopic(identity, packet.topic, acl);
    if (!decision.allowed) {
      warnPerClient(
        client,
        'denied',
        { clientId: client.id, username: identity.username, role: identity.role, topic: packet.topic, reason: decision.reason },
        'publish denied',
      );
      drop(packet);
    }
    done(null);
  };
  const turns = new PublishTurns();

  const clientIdRefusal = (clientId: string, login: string | undefined): string | undefined => {
    const bound = options.clientIds;
    if (!bound) return undefined;
    try {
      const holder = bound.holders.holderOf(clientId);
      const decision = mayUseClientId({
        clientId,
        login,
        holder,
        holderExists: holder === undefined || options.credentials?.get?.(holder) !== undefined,
        ownsPlugin: bound.ownsPlugin,
      });
      if (!decision.allowed) return decision.reason;
      if (login !== undefined) bound.holders.claim(clientId, login);
    } catch (error) {
      // The database is unusable (a full disk): connecting matters more than recording the claim.
      log.error({ clientId, username: login, err: error }, 'client id claim not recorded');
    }
    return undefined;
  };

  const pending = new PendingConnections<Socket>();
  /** The socket under a client, TCP or the one a WebSocket was upgraded from. */
  const socketOf = (client: Client): Socket | undefined => {
    const conn = client.conn as unknown;
    if (conn instanceof Socket) return conn;
    const upgraded = client.req?.socket;
    return upgraded instanceof Socket ? upgraded : undefined;
  };

  const aedes = await Aedes.createBroker({
    // CONNECT arrived: from here the login guard bounds the connection, not the count of silent ones.
    preConnect: (client, _packet, done) => {
      const socket = socketOf(client);
      if (socket) pending.settle(socket);
      done(null, true);
    },

    authenticate: (client, username, password, done) => {
      const clientId = client.id;
      const existing = (aedes as unknown as { clients: Record<string, Client | undefined> }).clients[clientId];
      const claim = (identity: ClientIdentity): void => {
        // MQTT lets a new connection with the same client id evict the old one; only the same user may,
        // or the owner of a plugin taking back the SDK's id for it.
        const holder = existing ? identities.get(existing) : undefined;
        const bound = options.clientIds;
        if (holder && holder.username !== identity.username && !(bound && takesBackOwnSdkId(clientId, identity.username, holder.username, bound.ownsPlugin))) {
          log.warn({ clientId, username: identity.username }, 'client id already in use by another user; refused');
          done(authError('client id in use', RETURN_CODE_IDENTIFIER_REJECTED), false);
          return;
        }
        // Offline too: a session stored under the id, or the id itself, stays with the login that used it.
        const refusal = clientIdRefusal(clientId, identity.username);
        if (refusal) {
          log.warn({ clientId, username: identity.username, reason: refusal }, 'client id belongs to another login; refused');
          done(authError('client id in use', RETURN_CODE_IDENTIFIER_REJECTED), false);
          return;
        }
        if (identity.username !== undefined) {
          const replacesOwn = holder !== undefined && holder.username === identity.username;
          if (!loginConnections.take(identity.username, client, replacesOwn)) {
            const held = loginConnections.held(identity.username);
            warnings.warn(
              log,
              `login-connections\u0000${identity.username}`,
              { clientId, username: identity.username, held },
              'login refused: the login holds its maximum of connections',
            );
            done(authError('too many connections for this login, try again later', RETURN_CODE_SERVER_UNAVAILABLE), false);
            return;
          }
          // The connection may have closed during the password check: then its place is given back at once.
          const stream = (socketOf(client) ?? client.conn) as unknown as { closed?: boolean; once(event: 'close', listener: () => void): void };
          if (stream.closed) loginConnections.release(client);
          else stream.once('close', () => loginConnections.release(client));
        }
        identities.set(client, identity);
        done(null, true);
      };
      if (username === undefined || username === '') {
        if (!anonymous) {
          log.warn({ clientId }, 'anonymous client refused');
          done(authError('anonymous clients are not allowed', RETURN_CODE_NOT_AUTHORIZED), false);
          return;
        }
        claim({ clientId, pluginIds: [], channels: [] });
        return;
      }
      const secret = password ? password.toString('utf8') : '';
      if (!guard || secret === '') {
        log.warn({ clientId, username }, 'login refused');
        done(authError('bad username or password', RETURN_CODE_BAD_CREDENTIALS), false);
        return;
      }
      guard.login(remoteAddressOf(client), username, secret).then(
        (outcome) => {
          if (!outcome.ok) {
            if (outcome.reason === 'bad_credentials') {
              log.warn({ clientId, username }, 'login refused');
              done(authError('bad username or password', RETURN_CODE_BAD_CREDENTIALS), false);
            } else {
              // Refused without a check (the address backs off, or too many checks wait): try again later.
              log.debug({ clientId, username, reason: outcome.reason }, 'login refused unchecked');
              done(authError('server unavailable, try again later', RETURN_CODE_SERVER_UNAVAILABLE), false);
            }
            return;
          }
          const credential = outcome.credential;
          claim({
            clientId,
            username: credential.name,
            role: credential.role,
            pluginIds: credential.plugin_ids,
            channels: credential.channels,
            ...(credential.users ? { users: credential.users } : {}),
          });
        },
        (error: unknown) => {
          log.error({ clientId, username, err: error }, 'credential check failed');
          done(authError('server unavailable', RETURN_CODE_SERVER_UNAVAILABLE), false);
        },
      );
    },

    authorizePublish: (client, packet, done) => {
      // client is null only for wills of clients from a previous broker run, which this one never has.
      if (!client) return done(null);
      turns.admit(client, () => authorizePublish(client, packet, done));
    },

    authorizeSubscribe: (client, subscription, done) => {
      const identity = identities.get(client);
      const decision = identity ? authorizeSubscribeFilter(identity, subscription.topic, acl) : ({ allowed: false, reason: 'not authenticated' } as const);
      if (!decision.allowed) {
        warnPerClient(
          client,
          'subscribe-denied',
          { clientId: client.id, username: identity?.username, role: identity?.role, filter: subscription.topic, reason: decision.reason },
          'subscribe denied',
        );
        // null negates the subscription: the client sees SUBACK 0x80 and stays connected.
        return done(null, null);
      }
      done(null, subscription);
    },

    authorizeForward: (client, packet: AedesPublishPacket) =>
      droppedPayloads.has(packet.payload as Buffer) || !mayReceive(client, packet.payload) ? null : packet,
  });

  keepOnlyGrantedSubscriptions((aedes as unknown as { persistence: SubscriptionPersistence }).persistence, (client, filter) => {
    const identity = identities.get(client);
    return identity !== undefined && authorizeSubscribeFilter(identity, filter, acl).allowed;
  });

  aedes.on('clientError', (client, error) => log.debug({ clientId: client.id, err: error.message }, 'client error'));
  aedes.on('connectionError', (_client, error) => log.debug({ err: error.message }, 'connection error'));

  const sockets = new Set<Socket>();
  /** Counts a connection until it sends CONNECT; over the limits the oldest silent one is closed to make room. */
  const admitConnection = (socket: Socket): void => {
    socket.once('close', () => pending.settle(socket));
    const eviction = pending.admit(socket, socket.remoteAddress ?? 'unknown');
    if (!eviction) return;
    const { address, reason } = eviction;
    warnings.warn(log, `connection\u0000${address}`, { address, reason }, 'connection closed: sent no login, and too many wait');
    eviction.connection.destroy();
  };
  const refuseFirstPacket = (address: string | undefined, announced: number): void => {
    warnings.warn(
      log,
      `first-packet\u0000${address ?? 'unknown'}`,
      { address, announced_bytes: announced, limit_bytes: MAX_FIRST_PACKET_BYTES },
      'connection closed: its first packet announced more bytes than a login ever needs',
    );
  };
  const tcpServer = createServer((socket) => {
    admitConnection(socket);
    socket.setNoDelay(noDelay);
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    aedes.handle(socket);
    guardFirstPacket(socket, (announced) => refuseFirstPacket(socket.remoteAddress, announced));
  });
  tcpServer.on('error', (error) => log.error({ err: error }, 'mqtt tcp listener error'));

  let wsServer: WebSocketServer | undefined;
  let httpServerForWs: Server | undefined;
  let tcpPort: number;
  let wsPort: number | null = null;
  try {
    tcpPort = await listen(tcpServer, options.port, host);
    if (wsEnabled) {
      // A plain net server hands upgraded sockets to ws ourselves, so TCP_NODELAY is set on the very socket
      // that carries the WebSocket frames.
      const httpServer = createHttpServer((_request, response) => {
        response.writeHead(426, { 'content-type': 'text/plain' }).end('MQTT over WebSocket only\n');
      });
      httpServer.on('connection', (socket: Socket) => {
        admitConnection(socket);
        socket.setNoDelay(noDelay);
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
      });
      const allowedOrigins = new Set((options.wsAllowedOrigins ?? []).map((origin) => origin.toLowerCase()));
      wsServer = new WebSocketServer({
        server: httpServer,
        // Without this check any web site the user visits could speak MQTT as a local client.
        verifyClient: ({ origin, req }: { origin?: string; req: IncomingMessage }) => {
          if (mayOpenMqttWebSocket(origin, req.headers.host, allowedOrigins)) return true;
          log.warn({ origin, address: req.socket.remoteAddress }, 'MQTT over WebSocket from a web page refused (origin not in broker.ws_allowed_origins)');
          return false;
        },
        // mqtt.js offers "mqtt" (3.1.1) or "mqttv3.1"; anything else is refused at the handshake.
        handleProtocols: (protocols) => ['mqtt', 'mqttv3.1'].find((protocol) => protocols.has(protocol)) ?? false,
      });
      wsServer.on('connection', (socket, request: IncomingMessage) => {
        const stream = createWebSocketStream(socket);
        stream.on('error', (error) => log.debug({ err: error.message }, 'websocket stream error'));
        aedes.handle(stream, request);
        guardFirstPacket(stream, (announced) => refuseFirstPacket(request.socket.remoteAddress, announced));
      });
      wsServer.on('error', (error) => log.error({ err: error }, 'mqtt websocket listener error'));
      httpServerForWs = httpServer;
      wsPort = await listen(httpServer, options.wsPort as number, wsHost);
    }
  } catch (error) {
    await closeServer(tcpServer).catch(() => undefined);
    if (httpServerForWs) await closeServer(httpServerForWs).catch(() => undefined);
    await new Promise<void>((resolve) => aedes.close(() => resolve()));
    throw error;
  }

  log.info({ host, tcpPort, wsHost: wsEnabled ? wsHost : undefined, wsPort, anonymous }, 'embedded broker listening');

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      // Stop accepting first, then let Aedes disconnect its clients (firing their wills), then force any
      // socket still open so close() cannot hang on a silent peer.
      const tcpClosed = closeServer(tcpServer);
      const wsClosed = httpServerForWs ? closeServer(httpServerForWs) : Promise.resolve();
      wsServer?.close();
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await Promise.all([tcpClosed, wsClosed]);
      log.info('embedded broker closed');
    })();
    return closing;
  };

  return {
    aedes,
    host,
    tcpPort,
    wsPort,
    anonymousAllowed: anonymous,
    identityOf: (client) => identities.get(client),
    isDropped: (packet) => Buffer.isBuffer(packet.payload) && droppedPayloads.has(packet.payload),
    disconnectUser: (username) => {
      const clients = Object.values((aedes as unknown as { clients: Record<string, Client | undefined> }).clients);
      let closed = 0;
      for (const client of clients) {
        if (!client || identities.get(client)?.username !== username) continue;
        log.info({ clientId: client.id, username }, 'session closed: its credential was removed or rotated');
        client.close();
        closed++;
      }
      return closed;
    },
    deliverOnlyTo: (payload, recipient) => {
      recipients.set(payload, recipient);
    },
    close,
  };
}
