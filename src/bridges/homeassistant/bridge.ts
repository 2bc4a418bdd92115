// Puts the plugin "homeassistant" into the registry when homeassistant.url and token are set, and takes
// it out when they no longer are (a plugin nobody can reach must not linger in retrieval). Run before
// the adapters are attached, so the restored or new record is attached once, with its current config.
import type { HomeAssistantConfig } from '../../config/types.js';
import type { Logger } from '../../log.js';
import type { RegistryApi } from '../../registry/registry-api.js';
import { HomeAssistantAdapter, type HomeAssistantSettings } from './ha-adapter.js';
import { baseDescriptor, HA_OWNER, HA_PLUGIN_ID } from './plugin-descriptor.js';

export interface HomeAssistantBridgeDeps {
  config: HomeAssistantConfig;
  registry: RegistryApi;
  log: Logger;
}

/** The settings when Home Assistant is configured; undefined otherwise. */
export function homeAssistantSettings(config: HomeAssistantConfig): HomeAssistantSettings | undefined {
  if (!config.url || !config.token) return undefined;
  return { url: config.url, token: config.token, refresh_sec: config.refresh_sec, timeout_sec: config.timeout_sec };
}

/** The adapter for the plugin "homeassistant", or undefined when Home Assistant is not configured. */
export function createHomeAssistantAdapter(deps: HomeAssistantBridgeDeps): HomeAssistantAdapter | undefined {
  const settings = homeAssistantSettings(deps.config);
  if (!settings) {
    if (deps.config.url && !deps.config.token)
      deps.log.warn('homeassistant.url is set but homeassistant.token (HOMECLAW_HA_TOKEN) is not; Home Assistant is not connected');
    return undefined;
  }
  return new HomeAssistantAdapter({ registry: deps.registry, log: deps.log, settings });
}

/** Registers (or updates, or removes) the plugin; never throws. */
export function syncHomeAssistantPlugin(deps: HomeAssistantBridgeDeps): void {
  const { registry, log } = deps;
  const settings = homeAssistantSettings(deps.config);
  const existing = registry.get(HA_PLUGIN_ID);
  if (!settings) {
    if (existing?.owner === HA_OWNER) {
      registry.unregister(HA_PLUGIN_ID);
      log.info('Home Assistant is no longer configured; plugin homeassistant removed');
    }
    return;
  }
  if (existing && existing.owner !== HA_OWNER) {
    log.error({ owner: existing.owner }, 'the plugin id "homeassistant" is taken by another registration; unregister it to connect Home Assistant');
    return;
  }
  // A restored record keeps its capabilities and entity list, so retrieval finds it while it reconnects.
  const fresh = baseDescriptor(settings.url);
  const descriptor = existing ? { ...existing.descriptor, type: fresh.type, config: { ...existing.descriptor.config, url: settings.url } } : fresh;
  const outcome = registry.register({
    descriptor,
    owner: HA_OWNER,
    ...(existing
      ? { state: existing.state, ...(existing.state_reason !== undefined ? { state_reason: existing.state_reason } : {}) }
      : { state: 'stale' as const, state_reason: 'connecting to Home Assistant' }),
  });
  if (!outcome.ok) log.error({ errors: outcome.errors }, 'could not register the plugin homeassistant');
  else log.info({ url: settings.url, change: outcome.change }, 'Home Assistant plugin registered');
}
