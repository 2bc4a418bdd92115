// Reaches the plugin "homeassistant": an MCP client of Home Assistant's MCP server (<url>/api/mcp,
// streamable HTTP, bearer token), built on the MCP adapter's connection (tool listing into capabilities,
// reconnect with backoff, deadlines). On top of it: Home Assistant's failures explained (token refused,
// integration missing, unreachable), tool answers turned into sentences, and the exposed entities read
// with GetLiveContext into the plugin's text on every (re)connect, every re-listing and every
// refresh_sec (Home Assistant's stateless endpoint cannot notify tools/list_changed).
import type { AdapterCall, HealthReport, PluginAdapter } from '../../adapters/adapter.js';
import { callResultText } from '../../adapters/mcp-call-result.js';
import { McpConnection, type BackoffSettings } from '../../adapters/mcp-connection.js';
import type { Logger } from '../../log.js';
import type { PluginResult } from '../../protocol/types.js';
import type { PluginRecord } from '../../registry/record.js';
import type { RegistryApi } from '../../registry/registry-api.js';
import { classifyHomeAssistantFailure } from './failures.js';
import { parseLiveContext, type ExposedEntity } from './live-context.js';
import { HA_PLUGIN_ID, withEntities } from './plugin-descriptor.js';
import { readableResult } from './tool-result.js';

export const LIVE_CONTEXT_TOOL = 'GetLiveContext';
export const MCP_PATH = '/api/mcp';

export interface HomeAssistantSettings {
  /** Base URL, e.g. http://homeassistant.local:8123 */
  url: string;
  token: string;
  refresh_sec: number;
  timeout_sec: number;
}

export interface HomeAssistantAdapterOptions {
  registry: RegistryApi;
  log: Logger;
  settings: HomeAssistantSettings;
  /** Reconnect delays: initial_ms doubling up to max_ms. Default 1 s → 30 s. */
  backoff?: Partial<BackoffSettings>;
}

/** <url>/api/mcp, whatever trailing slash the configured URL has. */
export function mcpUrlOf(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${MCP_PATH}`;
}

export class HomeAssistantAdapter implements PluginAdapter {
  readonly type = 'homeassistant' as const;
  private connection: McpConnection | undefined;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  private readonly log: Logger;

  constructor(private readonly options: HomeAssistantAdapterOptions) {
    this.log = options.log.child({ room: 'bridges', bridge: 'homeassistant' });
  }

  /** Connects to Home Assistant; resolves after the first attempt, whatever its outcome. */
  async attach(record: PluginRecord): Promise<void> {
    const { registry, settings } = this.options;
    if (record.descriptor.id !== HA_PLUGIN_ID) {
      registry.setState(
        record.descriptor.id,
        'error',
        `only the Core creates plugins of type homeassistant (from homeassistant.url); register "${record.descriptor.id}" with another type`,
      );
      return;
    }
    if (this.connection) return;
    const mcpUrl = mcpUrlOf(settings.url);
    this.connection = new McpConnection({
      plugin_id: HA_PLUGIN_ID,
      settings: { connection: { transport: 'streamable-http', url: mcpUrl, headers: { authorization: `Bearer ${settings.token}` } } },
      registry,
      log: this.log,
      backoff: { initial_ms: this.options.backoff?.initial_ms ?? 1_000, max_ms: this.options.backoff?.max_ms ?? 30_000 },
      connect_timeout_ms: settings.timeout_sec * 1000,
      classifyFailure: classifyHomeAssistantFailure(settings.url, mcpUrl),
      onReady: () =>
        void this.refreshEntities().catch((error: unknown) => this.log.error({ err: (error as Error).message }, 'reading the Home Assistant entities failed')),
    });
    this.timer = setInterval(() => void this.refresh(), settings.refresh_sec * 1000);
    this.timer.unref();
    if (record.state === 'online') registry.setState(HA_PLUGIN_ID, 'stale', `connecting to Home Assistant at ${settings.url}`);
    this.log.info({ url: mcpUrl }, 'connecting to Home Assistant');
    await this.connection.start();
  }

  async detach(record: PluginRecord): Promise<void> {
    if (record.descriptor.id !== HA_PLUGIN_ID) return;
    await this.close();
  }

  async invoke(call: AdapterCall): Promise<PluginResult> {
    const connection = this.connection;
    if (!connection) {
      return {
        request_id: call.request.request_id,
        plugin_id: call.request.plugin_id,
        success: false,
        error: 'Home Assistant is not connected',
        error_code: 'offline',
      };
    }
    return readableResult(call.capability.id, await connection.invoke(call));
  }

  async health(): Promise<HealthReport> {
    return this.connection ? this.connection.health() : { ok: false, detail: 'not attached' };
  }

  /** Resolves true once connected and the tools are listed (tests, CLI health). */
  whenConnected(timeoutMs: number): Promise<boolean> {
    return this.connection ? this.connection.whenConnected(timeoutMs) : Promise.resolve(false);
  }

  /** Lists the tools and reads the entities again now; what the refresh_sec timer does. */
  async refresh(): Promise<void> {
    const connection = this.connection;
    if (!connection?.isConnected) return;
    try {
      await connection.relistNow();
    } catch (error) {
      this.log.warn({ err: (error as Error).message }, 'Home Assistant tool re-listing failed');
    }
    // A successful listing has already started the entity refresh (onReady); wait for that one.
    await (this.refreshing ?? this.refreshEntities());
  }

  /** Reads the exposed entities into the plugin's text; overlapping requests collapse into one more run. */
  refreshEntities(): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.refreshAgain = false;
        await this.readEntitiesOnce();
      } while (this.refreshAgain);
    })().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async readEntitiesOnce(): Promise<void> {
    const { registry, settings } = this.options;
    const connection = this.connection;
    const record = registry.get(HA_PLUGIN_ID);
    if (!connection?.isConnected || !record) return;
    let entities: ExposedEntity[] = [];
    // Home Assistant offers GetLiveContext only while some entity is exposed to Assist.
    if (record.descriptor.capabilities.some((capability) => capability.id === LIVE_CONTEXT_TOOL)) {
      try {
        const parsed = await parseLiveContext(callResultText(await connection.callTool(LIVE_CONTEXT_TOOL, {}, settings.timeout_sec * 1000)));
        if (!parsed.ok) {
          this.log.warn({ reason: parsed.error }, 'could not read the exposed Home Assistant entities; keeping the previous list');
          return;
        }
        entities = parsed.entities;
      } catch (error) {
        this.log.warn({ err: (error as Error).message }, 'GetLiveContext failed; keeping the previous entity list');
        return;
      }
    }
    // Stopped or reconnected meanwhile: what this connection read no longer belongs in the registry.
    if (this.connection !== connection) return;
    this.writeEntities(entities);
  }

  private writeEntities(entities: ExposedEntity[]): void {
    const { registry } = this.options;
    const record = registry.get(HA_PLUGIN_ID);
    if (!record) return;
    const descriptor = withEntities(record.descriptor, entities);
    const outcome = registry.register({
      descriptor,
      owner: record.owner,
      state: record.state,
      ...(record.state_reason !== undefined ? { state_reason: record.state_reason } : {}),
    });
    if (!outcome.ok) {
      this.log.error({ errors: outcome.errors }, 'registry refused the Home Assistant entity list');
      return;
    }
    if (outcome.change === 'updated') {
      const areas = new Set(entities.flatMap((entity) => entity.areas.slice(0, 1)));
      this.log.info({ entities: entities.length, areas: areas.size }, 'Home Assistant entities indexed');
    }
  }

  private async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const connection = this.connection;
    this.connection = undefined;
    await connection?.stop();
  }

  async stop(): Promise<void> {
    await this.close();
    // A refresh still reading must end before the registry it writes to is closed.
    await this.refreshing?.catch(() => undefined);
  }
}
