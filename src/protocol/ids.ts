// Ids become MQTT topic levels, so anything that could change the topic structure (/, +, #, empty)
// must be impossible by construction.

export const PLUGIN_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Channel names follow the same rule as plugin ids. */
export const CHANNEL_ID_PATTERN = PLUGIN_ID_PATTERN;
/** Request ids are chosen by the Core (UUIDs) but plugins echo them back, so they are checked too. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

export function isPluginId(value: unknown): value is string {
  return typeof value === 'string' && PLUGIN_ID_PATTERN.test(value);
}

export function isChannelId(value: unknown): value is string {
  return typeof value === 'string' && CHANNEL_ID_PATTERN.test(value);
}

export function isRequestId(value: unknown): value is string {
  return typeof value === 'string' && REQUEST_ID_PATTERN.test(value);
}

/** A human explanation of why an id is refused, for error messages. */
export function explainBadId(value: unknown, what = 'plugin id'): string {
  if (typeof value !== 'string') return `${what} must be a string`;
  if (value.length === 0) return `${what} must not be empty`;
  if (value.length > 64) return `${what} is ${value.length} characters long; at most 64 are allowed`;
  return `${what} "${value}" must match ${PLUGIN_ID_PATTERN.source} (lowercase letters, digits, _ and -; no /, + or #)`;
}

/** The SDK's default MQTT client id for a plugin: stable, so its owner can be recognised. */
const SDK_CLIENT_ID_PREFIX = 'homeclaw-plugin-';

export function sdkClientId(pluginId: string): string {
  return `${SDK_CLIENT_ID_PREFIX}${pluginId}`;
}

/** The plugin id in an SDK default client id, or undefined for any other client id. */
export function pluginIdOfSdkClientId(clientId: string): string | undefined {
  if (!clientId.startsWith(SDK_CLIENT_ID_PREFIX)) return undefined;
  const pluginId = clientId.slice(SDK_CLIENT_ID_PREFIX.length);
  return isPluginId(pluginId) ? pluginId : undefined;
}
