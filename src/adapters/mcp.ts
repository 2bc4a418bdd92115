// The MCP adapter: the Core as an MCP client of `type: mcp` plugins (stdio, SSE, streamable HTTP).
// One McpConnection per plugin; this class maps registry records to connections and back.
import type { AdapterCall, HealthReport, PluginAdapter } from './adapter.js';
import type { Logger } from '../log.js';
import type { PluginResult } from '../protocol/types.js';
import type { PluginRecord } from '../registry/record.js';
import type { RegistryApi } from '../registry/registry-api.js';
import { connectionFingerprint, readMcpConfig } from './mcp-config.js';
import { McpConnection, type BackoffSettings } from './mcp-connection.js';
import { guardedFetchLike } from './guarded-fetch.js';
import type { SelfTargetGuard } from './self-target.js';

export interface McpAdapterOptions {
  registry: RegistryApi;
  log: Logger;
  /** Restart delays after a crash or failed connect: initial_ms doubling up to max_ms. Default 500 ms → 30 s. */
  restart_backoff?: Partial<BackoffSettings>;
  /** Limit for initialize and each tools/list page. Default 15 s. */
  connect_timeout_ms?: number;
  /** Refuses MCP server URLs (and every URL the client fetches) that reach the Core's own HTTP API. */
  guard?: SelfTargetGuard;
}

interface Attached {
  fingerprint: string;
  connection: McpConnection;
}

export class McpAdapter implements PluginAdapter {
  readonly type = 'mcp' as const;
  private readonly attached = new Map<string, Attached>();
  private readonly backoff: BackoffSettings;
  private readonly log: Logger;
  private stopFollowingUpdates: (() => void) | undefined;

  constructor(private readonly options: McpAdapterOptions) {
    this.backoff = { initial_ms: options.restart_backoff?.initial_ms ?? 500, max_ms: options.restart_backoff?.max_ms ?? 30_000 };
    this.log = options.log.child({ room: 'adapters', adapter: 'mcp' });
  }

  /**
   * Connects (or keeps the existing connection when the transport settings did not change, which is
   * the case when the adapter itself re-registers the listed tools). Resolves after the first connect
   * attempt; a failed one leaves the plugin stale and retrying.
   */
  async attach(record: PluginRecord): Promise<void> {
    this.followUpdates();
    const pluginId = record.descriptor.id;
    const parsed = readMcpConfig(record.descriptor.config);
    if (!parsed.ok) {
      this.log.error({ plugin_id: pluginId, error: parsed.error }, 'MCP plugin config is invalid');
      await this.detach(record);
      this.options.registry.setState(pluginId, 'error', parsed.error);
      return;
    }
    if (this.options.guard && parsed.settings.connection.transport !== 'stdio') {
      const refused = await this.options.guard.check(parsed.settings.connection.url);
      if (refused) {
        this.log.error({ plugin_id: pluginId, url: parsed.settings.connection.url }, 'MCP plugin targets the Core itself; not connected');
        await this.detach(record);
        this.options.registry.setState(pluginId, 'error', refused);
        return;
      }
    }
    const fingerprint = connectionFingerprint(parsed.settings);
    const existing = this.attached.get(pluginId);
    if (existing?.fingerprint === fingerprint) return;
    if (existing) {
      this.attached.delete(pluginId);
      await existing.connection.stop();
    }
    const connection = new McpConnection({
      plugin_id: pluginId,
      settings: parsed.settings,
      registry: this.options.registry,
      log: this.log,
      backoff: this.backoff,
      connect_timeout_ms: this.options.connect_timeout_ms ?? 15_000,
      ...(this.options.guard ? { fetch: guardedFetchLike(this.options.guard) } : {}),
    });
    this.attached.set(pluginId, { fingerprint, connection });
    // Not routable until its tools are listed.
    if (record.state === 'online') this.options.registry.setState(pluginId, 'stale', 'connecting to the MCP server');
    await connection.start();
  }

  /**
   * A re-registration that keeps the connection settings does not re-attach, but it replaces the
   * capabilities the server listed; the connection writes them back.
   */
  private followUpdates(): void {
    this.stopFollowingUpdates ??= this.options.registry.events.on('plugin.updated', ({ record }) => {
      this.attached.get(record.descriptor.id)?.connection.refreshCapabilities();
    });
  }

  async detach(record: PluginRecord): Promise<void> {
    const entry = this.attached.get(record.descriptor.id);
    if (!entry) return;
    this.attached.delete(record.descriptor.id);
    await entry.connection.stop();
  }

  invoke(call: AdapterCall): Promise<PluginResult> {
    const entry = this.attached.get(call.record.descriptor.id);
    if (!entry) {
      return Promise.resolve({
        request_id: call.request.request_id,
        plugin_id: call.request.plugin_id,
        success: false,
        error: `MCP plugin ${call.record.descriptor.id} is not attached`,
        error_code: 'offline',
      });
    }
    return entry.connection.invoke(call);
  }

  async health(record: PluginRecord): Promise<HealthReport> {
    const entry = this.attached.get(record.descriptor.id);
    if (!entry) return { ok: false, detail: 'not attached' };
    return entry.connection.health();
  }

  /** Resolves true once the plugin's server is connected and its tools listed (tests, CLI health). */
  whenConnected(pluginId: string, timeoutMs: number): Promise<boolean> {
    const entry = this.attached.get(pluginId);
    return entry ? entry.connection.whenConnected(timeoutMs) : Promise.resolve(false);
  }

  /** The pid of a stdio plugin's server process, while it runs. */
  serverPid(pluginId: string): number | undefined {
    return this.attached.get(pluginId)?.connection.pid;
  }

  /** Closes every client and ends every stdio server's process group. */
  async stop(): Promise<void> {
    this.stopFollowingUpdates?.();
    this.stopFollowingUpdates = undefined;
    const entries = [...this.attached.values()];
    this.attached.clear();
    await Promise.all(entries.map((entry) => entry.connection.stop()));
  }
}
