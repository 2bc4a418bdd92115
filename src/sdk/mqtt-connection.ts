// The MQTT client of a plugin: stable client id, will, TCP_NODELAY on every (re)connect, and a
// reconnect delay that doubles on each failed attempt so a fleet of plugins does not hammer a
// restarting broker.
import net from 'node:net';
import { connect, MqttClient, type IClientOptions } from 'mqtt';
import { isProtocolVersionRefusal } from '../protocol/mqtt-reason-codes.js';

export interface MqttConnectionOptions {
  url: string;
  clientId: string;
  credentials?: { username: string; password: string };
  keepalive_sec: number;
  will: { topic: string; payload: string };
  reconnect_period_ms: number;
  reconnect_max_ms: number;
  /** 4 (3.1.1, default) or 5. */
  protocol_version?: 4 | 5;
  /** Called once if the broker refuses MQTT 5 and the client goes on with 3.1.1. */
  onProtocolFallback?: (connackError: Error) => void;
}

/** CONNACK errors answered by falling back to MQTT 3.1.1: not failures of the connection. */
const fallbackRefusals = new WeakSet<Error>();

export function isHandledProtocolRefusal(error: Error): boolean {
  return fallbackRefusals.has(error);
}

export function createMqttClient(options: MqttConnectionOptions): MqttClient {
  const clientOptions: IClientOptions = {
    clientId: options.clientId,
    clean: true,
    keepalive: options.keepalive_sec,
    protocolVersion: options.protocol_version ?? 4,
    reconnectPeriod: options.reconnect_period_ms,
    connectTimeout: 10_000,
    // Subscriptions are renewed by the plugin on every connect, before it registers.
    resubscribe: false,
    // A heartbeat queued while offline is stale by the time it could be sent.
    queueQoSZero: false,
    will: { topic: options.will.topic, payload: Buffer.from(options.will.payload), qos: 1, retain: true },
    ...credentialsOf(options),
  };
  const client = buildClient(options.url, clientOptions);
  applyBackoff(client, options.reconnect_period_ms, options.reconnect_max_ms);
  fallBackToV311(client, options.onProtocolFallback);
  // Other transports (TLS, WebSocket over TCP) get TCP_NODELAY as soon as the connection is up; only the
  // CONNECT packet precedes it, and Nagle never delays a first write.
  client.on('connect', () => setNoDelay(client.stream));
  coalesceWrites(client);
  return client;
}

/**
 * Packets written during one turn of the event loop leave in one write. Receiving an invoke sends its
 * PUBACK, and a handler that answers at once sends the result in the same turn; without this each would
 * be its own write system call (which on loopback also wakes the broker). The socket is corked when a
 * packet arrives or is sent and uncorked in the check phase of that same turn (setImmediate), so no
 * packet waits longer than the turn it was written in.
 */
function coalesceWrites(client: MqttClient): void {
  let corked: { uncork(): void } | undefined;
  const uncork = (): void => {
    const stream = corked;
    corked = undefined;
    stream?.uncork();
  };
  const cork = (): void => {
    if (corked) return;
    const stream = client.stream as { cork?: () => void; uncork?: () => void; destroyed?: boolean } | undefined;
    if (!stream || typeof stream.cork !== 'function' || typeof stream.uncork !== 'function' || stream.destroyed) return;
    stream.cork();
    corked = stream as { uncork(): void };
    setImmediate(uncork);
  };
  client.on('packetreceive', cork);
  client.on('packetsend', cork);
}

function buildClient(url: string, clientOptions: IClientOptions): MqttClient {
  const parsed = new URL(url);
  if (parsed.protocol === 'mqtt:' || parsed.protocol === 'tcp:') {
    // Plain TCP: create the socket ourselves so TCP_NODELAY is set from the very first byte.
    const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1') || 'localhost';
    const port = parsed.port ? Number(parsed.port) : 1883;
    return new MqttClient(() => net.createConnection({ host, port, noDelay: true }), {
      ...clientOptions,
      protocol: 'mqtt',
      host,
      port,
    });
  }
  return connect(url, clientOptions);
}

/** Explicit credentials win over a user:password in the URL. */
function credentialsOf(options: MqttConnectionOptions): { username?: string; password?: string } {
  if (options.credentials) return { username: options.credentials.username, password: options.credentials.password };
  const url = new URL(options.url);
  if (!url.username) return {};
  return { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
}

/**
 * A broker that speaks only 3.1.1 (the embedded Aedes among them) answers a version-5 CONNECT with
 * "unacceptable protocol version" and closes: connect again at once with 3.1.1, and stay with it.
 */
function fallBackToV311(client: MqttClient, onFallback: ((connackError: Error) => void) | undefined): void {
  client.on('error', (error) => {
    if (client.options.protocolVersion !== 5 || !isProtocolVersionRefusal(error)) return;
    client.options.protocolVersion = 4;
    fallbackRefusals.add(error);
    onFallback?.(error);
    // mqtt.js does not reconnect after a refused CONNACK by itself.
    setImmediate(() => client.reconnect());
  });
}

function applyBackoff(client: MqttClient, initialMs: number, maxMs: number): void {
  client.on('reconnect', () => {
    const current = client.options.reconnectPeriod ?? initialMs;
    client.options.reconnectPeriod = Math.min(Math.max(current * 2, initialMs), maxMs);
  });
  client.on('connect', () => {
    client.options.reconnectPeriod = initialMs;
  });
}

function setNoDelay(stream: unknown): void {
  const socket = stream as { setNoDelay?: (noDelay: boolean) => unknown } | undefined;
  if (socket && typeof socket.setNoDelay === 'function') socket.setNoDelay(true);
}
