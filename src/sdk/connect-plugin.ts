// The SDK's entry point: check the descriptor and handlers locally, connect, register, and hand back a
// running plugin — or reject with every reason it could not start.
import type { MqttClient } from 'mqtt';
import { topics } from '../protocol/topics.js';
import { sdkClientId } from '../protocol/ids.js';
import type { PluginStatusMessage } from '../protocol/types.js';
import { stderrLogger } from './default-logger.js';
import { checkHandlers, prepareDescriptor } from './descriptor.js';
import { PluginRegistrationError } from './errors.js';
import { createMqttClient, isHandledProtocolRefusal } from './mqtt-connection.js';
import { ParameterValidator } from './parameter-validator.js';
import { PluginConnection } from './plugin-connection.js';
import type { ConnectedPlugin, ConnectPluginOptions } from './types.js';
import { errorMessage } from '../kit/error-message.js';
import { redactUrl } from '../kit/redact-url.js';

const DEFAULTS = {
  heartbeat_interval_sec: 30,
  keepalive_sec: 30,
  startup_timeout_ms: 30_000,
  reconnect_period_ms: 1000,
  reconnect_max_ms: 30_000,
  max_payload_bytes: 1024 * 1024,
  register_timeout_ms: 10_000,
};

export async function connectPlugin(options: ConnectPluginOptions): Promise<ConnectedPlugin> {
  const prepared = prepareDescriptor(options.descriptor);
  if (!prepared.ok) throw new PluginRegistrationError('invalid plugin descriptor', prepared.errors);
  const descriptor = prepared.descriptor;
  const handlerErrors = checkHandlers(descriptor, options.handlers);
  if (handlerErrors.length > 0) throw new PluginRegistrationError('handlers do not match the descriptor', handlerErrors);
  let parameters: ParameterValidator;
  try {
    parameters = new ParameterValidator(descriptor.capabilities);
  } catch (error) {
    throw new PluginRegistrationError('a capability has an unusable parameter schema', [{ path: '/capabilities', message: errorMessage(error) }]);
  }

  const heartbeatIntervalSec = options.heartbeat_interval_sec ?? DEFAULTS.heartbeat_interval_sec;
  if (!(heartbeatIntervalSec > 0)) {
    throw new PluginRegistrationError('invalid options', [{ path: '/heartbeat_interval_sec', message: 'must be a positive number of seconds' }]);
  }
  const startupTimeoutMs = options.startup_timeout_ms ?? DEFAULTS.startup_timeout_ms;
  const deadline = Date.now() + startupTimeoutMs;
  const epoch = Date.now();
  const clientId = options.clientId ?? sdkClientId(descriptor.id);
  const log = options.log ?? stderrLogger(descriptor.id);
  const will: PluginStatusMessage = { state: 'offline', epoch };

  const client = createMqttClient({
    url: options.url,
    clientId,
    credentials: options.credentials,
    keepalive_sec: options.keepalive_sec ?? DEFAULTS.keepalive_sec,
    will: { topic: topics.status(descriptor.id), payload: JSON.stringify(will) },
    reconnect_period_ms: options.reconnect_period_ms ?? DEFAULTS.reconnect_period_ms,
    reconnect_max_ms: options.reconnect_max_ms ?? DEFAULTS.reconnect_max_ms,
    protocol_version: options.protocol_version === 5 ? 5 : 4,
    onProtocolFallback: (error) =>
      log.warn({ err: error.message }, 'the broker refused MQTT 5 (CONNACK: unacceptable protocol version); connecting with MQTT 3.1.1 instead'),
  });
  const plugin = new PluginConnection({
    client,
    descriptor,
    handlers: options.handlers,
    parameters,
    clientId,
    epoch,
    heartbeat_interval_sec: heartbeatIntervalSec,
    max_payload_bytes: options.max_payload_bytes ?? DEFAULTS.max_payload_bytes,
    register_timeout_ms: options.register_timeout_ms ?? DEFAULTS.register_timeout_ms,
    log,
  });
  try {
    await waitForConnect(client, startupTimeoutMs, options.url);
    await plugin.start(deadline);
  } catch (error) {
    await plugin.close().catch(() => {});
    throw error;
  }
  return plugin;
}

/** CONNACK return code 2 (MQTT 3.1.1): the broker will not take this client id. */
const CONNACK_IDENTIFIER_REJECTED = 2;

function clientIdAdvice(clientId: string): string {
  return (
    `client id "${clientId}" is taken: another login holds it (the Core keeps a client id with the login that first ` +
    'connected with it), or it is in use. Connect with the login that owns this plugin, or choose another clientId'
  );
}

/**
 * Resolves on the first CONNACK. A refused CONNACK (bad credentials, not authorised) fails at once;
 * an unreachable broker is retried until the timeout, since plugins often start before the Core.
 */
function waitForConnect(client: MqttClient, timeoutMs: number, url: string): Promise<void> {
  if (client.connected) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    let lastError: Error | undefined;
    const cleanup = (): void => {
      clearTimeout(timer);
      client.off('connect', onConnect);
      client.off('error', onError);
    };
    const onConnect = (): void => {
      cleanup();
      resolve();
    };
    const onError = (error: Error): void => {
      lastError = error;
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'number' && !isHandledProtocolRefusal(error)) {
        cleanup();
        const why = code === CONNACK_IDENTIFIER_REJECTED ? `: ${clientIdAdvice(client.options.clientId ?? '')}` : '';
        reject(new PluginRegistrationError(`the broker refused the connection${why}`, [{ path: '', message: `${error.message} (CONNACK code ${code})` }]));
      }
    };
    const timer = setTimeout(() => {
      cleanup();
      const cause = lastError ? `: ${lastError.message}` : '';
      reject(new PluginRegistrationError(`could not connect to ${redactUrl(url)} within ${timeoutMs} ms${cause}`, []));
    }, timeoutMs);
    client.on('connect', onConnect);
    client.on('error', onError);
  });
}
