// One `type: mcp` plugin's link to its MCP server: connect, list every tool page into capabilities,
// keep the registry descriptor in step (on connect, reconnect and tools/list_changed), call tools, and
// when the link breaks fail the in-flight calls at once, mark the plugin stale and reconnect with
// exponential backoff.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResultSchema, ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AdapterCall, HealthReport } from './adapter.js';
import type { Logger } from '../log.js';
import type { JsonValue, PluginResult } from '../protocol/types.js';
import type { RegistryApi } from '../registry/registry-api.js';
import type { McpPluginSettings } from './mcp-config.js';
import { McpStdioClientTransport } from './mcp-stdio-transport.js';
import { callResultText } from './mcp-call-result.js';
import { singleToolArguments, type ToolCatalog } from './mcp-tools.js';
import { catalogOfTools, listAllTools } from './mcp-tool-listing.js';
import { errorMessage } from '../kit/error-message.js';
import { formatIssues } from '../kit/format-issues.js';
import { packageVersion } from '../kit/package-version.js';

export interface BackoffSettings {
  initial_ms: number;
  max_ms: number;
}

/** How a failure should show: the plugin state, the reason users read, and whether retrying can help. */
export type FailureVerdict = { state: 'stale' | 'error'; reason: string; retry: boolean };

export interface McpConnectionDeps {
  plugin_id: string;
  settings: McpPluginSettings;
  registry: RegistryApi;
  log: Logger;
  backoff: BackoffSettings;
  connect_timeout_ms: number;
  /** Explains failures a particular server gives meaning to (an HTTP 401 or 404, say); undefined keeps the default. */
  classifyFailure?: (error: unknown) => FailureVerdict | undefined;
  /** Called once connected and after every later successful tool listing. */
  onReady?: () => void;
  /** fetch for the HTTP transports (default: the global one). */
  fetch?: FetchLike;
}

interface Session {
  client: Client;
  transport: Transport;
  catalog?: ToolCatalog;
  /** Set once the link is gone; in-flight calls report it. */
  lost?: string;
}

const CLIENT_INFO = { name: 'homeclaw-bus', version: packageVersion() };
const GARBAGE_LOG_EVERY = 100;

export class McpConnection {
  private session: Session | undefined;
  private connected = false;
  private stopped = false;
  private attempt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private lastProblem: string | undefined;
  private garbageSeen = 0;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly deps: McpConnectionDeps) {}

  get pluginId(): string {
    return this.deps.plugin_id;
  }

  /** The pid of the stdio server process, while one runs. */
  get pid(): number | undefined {
    const transport = this.session?.transport;
    return transport instanceof McpStdioClientTransport ? transport.pid : undefined;
  }

  get isConnected(): boolean {
    return this.connected;
  }

  /** Starts connecting; resolves after the first attempt, whatever its outcome. */
  start(): Promise<void> {
    return this.connect();
  }

  /** Resolves true once connected (and tools listed), false at the timeout or when stopped. */
  whenConnected(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.connected) return Promise.resolve(true);
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const finish = (value: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(onConnected);
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const onConnected = (): void => finish(this.connected);
      const onAbort = (): void => finish(false);
      const timer = setTimeout(() => finish(false), Math.max(0, timeoutMs));
      this.waiters.add(onConnected);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private wakeWaiters(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  private createTransport(): Transport {
    const { connection } = this.deps.settings;
    if (connection.transport === 'stdio') {
      const log = this.deps.log;
      return new McpStdioClientTransport(connection, (line) => log.debug({ plugin_id: this.pluginId, stderr: line }, 'MCP server stderr'));
    }
    const options = { requestInit: { headers: connection.headers }, ...(this.deps.fetch ? { fetch: this.deps.fetch } : {}) };
    if (connection.transport === 'sse') return new SSEClientTransport(new URL(connection.url), options);
    return new StreamableHTTPClientTransport(new URL(connection.url), options);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const transport = this.createTransport();
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const session: Session = { client, transport };
    this.session = session;
    client.onclose = () => this.onLinkLost(session, this.explainLoss(session));
    client.onerror = (error) => this.onTransportError(session, error);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.relist(session).catch((error: unknown) =>
        this.deps.log.warn({ plugin_id: this.pluginId, err: errorMessage(error) }, 'MCP re-list after tools/list_changed failed'),
      );
    });
    try {
      await client.connect(transport, { timeout: this.deps.connect_timeout_ms });
      await this.relist(session);
      if (this.stopped || session.lost) return;
      this.connected = true;
      this.attempt = 0;
      this.lastProblem = undefined;
      this.deps.registry.setState(this.pluginId, 'online');
      this.deps.log.info({ plugin_id: this.pluginId, tools: session.catalog?.capabilities.length, pid: this.pid }, 'MCP server connected');
      this.wakeWaiters();
      this.notifyReady();
    } catch (error) {
      const verdict = this.deps.classifyFailure?.(error);
      this.onLinkLost(session, verdict?.reason ?? this.describeConnectFailure(session, error), verdict);
    }
  }

  /** Tells the owner the tools are listed; the first listing's notice comes from connect(), once the link is up. */
  private notifyReady(): void {
    try {
      this.deps.onReady?.();
    } catch (error) {
      this.deps.log.error({ plugin_id: this.pluginId, err: errorMessage(error) }, 'MCP ready listener failed');
    }
  }

  private describeConnectFailure(session: Session, error: unknown): string {
    const timedOut = error instanceof McpError && error.code === ErrorCode.RequestTimeout;
    const base =
      session.lost ??
      (timedOut
        ? `MCP server ${this.pluginId} did not answer the MCP handshake or tools/list within ${this.deps.connect_timeout_ms} ms`
        : `cannot connect to MCP server ${this.pluginId}: ${errorMessage(error)}`);
    return this.withGarbageHint(session, base);
  }

  private withGarbageHint(session: Session, message: string): string {
    const transport = session.transport;
    const garbage = transport instanceof McpStdioClientTransport ? transport.garbage : undefined;
    if (garbage?.first) {
      return `${message} (it wrote ${garbage.count} non-JSON-RPC line(s) to stdout, first: "${garbage.first}")`;
    }
    return message;
  }

  private explainLoss(session: Session): string {
    const transport = session.transport;
    if (transport instanceof McpStdioClientTransport) {
      if (transport.exit) return `MCP server ${this.pluginId} ${transport.describeExit()}`;
      return `MCP server ${this.pluginId} closed its connection`;
    }
    return `connection to MCP server ${this.pluginId} lost`;
  }

  private onTransportError(session: Session, error: Error): void {
    if (/not JSON-RPC/.test(error.message)) {
      // A chatty server could flood the log: first few lines, then a sample.
      this.garbageSeen += 1;
      if (this.garbageSeen <= 5 || this.garbageSeen % GARBAGE_LOG_EVERY === 0) {
        this.deps.log.warn({ plugin_id: this.pluginId, count: this.garbageSeen, err: error.message }, 'MCP server wrote garbage to stdout');
      }
      return;
    }
    // The transport reports an HTTP failure here before the request rejects and the client closes.
    const verdict = this.deps.classifyFailure?.(error);
    if (verdict) return this.onLinkLost(session, verdict.reason, verdict);
    this.deps.log.warn({ plugin_id: this.pluginId, err: error.message }, 'MCP transport error');
    // HTTP transports report a dead server as errors, not as a close: confirm with a ping.
    if (!(session.transport instanceof McpStdioClientTransport) && this.connected && session === this.session && !session.lost) {
      session.client.ping({ timeout: 3000 }).catch(() => this.onLinkLost(session, `MCP server ${this.pluginId} stopped answering: ${error.message}`));
    }
  }

  /** Fails in-flight calls (closing the client rejects them), marks the plugin stale and schedules a reconnect. */
  private onLinkLost(session: Session, reason: string, verdict?: FailureVerdict): void {
    if (session.lost) return;
    session.lost = reason;
    if (session !== this.session) return;
    const wasConnected = this.connected;
    this.connected = false;
    this.lastProblem = reason;
    void session.client.close().catch(() => undefined);
    if (this.stopped) return;
    const retry = verdict?.retry ?? true;
    if (!retry) this.deps.log.error({ plugin_id: this.pluginId, reason }, 'MCP server refused the connection; not retrying');
    else if (wasConnected) this.deps.log.warn({ plugin_id: this.pluginId, reason }, 'MCP server link lost; reconnecting');
    else this.deps.log.warn({ plugin_id: this.pluginId, reason, attempt: this.attempt }, 'MCP server connection failed; retrying');
    if (this.deps.registry.get(this.pluginId)) this.deps.registry.setState(this.pluginId, verdict?.state ?? 'stale', reason);
    if (retry) this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retryTimer) return;
    const delay = Math.min(this.deps.backoff.max_ms, this.deps.backoff.initial_ms * 2 ** this.attempt);
    this.attempt += 1;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, delay);
    this.retryTimer.unref();
  }

  /**
   * Called when someone else re-registered the plugin (e.g. `homeclaw plugins register` again with a
   * manifest that names no tools): the server's tools are written back, so a re-registration never
   * leaves an MCP plugin with only its placeholder capability. A no-op while not connected (the next
   * connect lists anyway) and when the registry already holds what the server listed.
   */
  refreshCapabilities(): void {
    const session = this.session;
    if (!session || !this.connected || session.lost || !session.catalog) return;
    const record = this.deps.registry.get(this.pluginId);
    if (!record || JSON.stringify(record.descriptor.capabilities) === JSON.stringify(session.catalog.capabilities)) return;
    this.relist(session).catch((error: unknown) =>
      this.deps.log.warn({ plugin_id: this.pluginId, err: errorMessage(error) }, 'MCP re-list after re-registration failed'),
    );
  }

  /** Lists every tool and writes the capabilities into the registry (same owner: the registry replaces). */
  private async relist(session: Session): Promise<void> {
    const listing = { plugin_id: this.pluginId, log: this.deps.log, timeout_ms: this.deps.connect_timeout_ms };
    const tools = await listAllTools(session.client, listing);
    if (session !== this.session || this.stopped) return;
    if (this.connected) queueMicrotask(() => this.notifyReady());
    const record = this.deps.registry.get(this.pluginId);
    const previous = record?.descriptor.capabilities ?? [];
    const single = this.deps.settings.single_tool;
    const previousSingle = session.catalog?.single_tool;
    const catalog = catalogOfTools(
      { tools, previous, ...(single ? { configured_single: single } : {}), ...(previousSingle ? { previous_single: previousSingle } : {}) },
      listing,
    );
    session.catalog = catalog;
    if (!record) return;
    if (catalog.capabilities.length === 0) {
      this.deps.log.warn({ plugin_id: this.pluginId }, 'MCP server lists no tools; keeping the registered capabilities');
      return;
    }
    if (JSON.stringify(previous) === JSON.stringify(catalog.capabilities)) return;
    const outcome = this.deps.registry.register({
      descriptor: { ...record.descriptor, capabilities: catalog.capabilities },
      owner: record.owner,
      state: this.connected ? 'online' : record.state,
      ...(record.epoch !== undefined ? { epoch: record.epoch } : {}),
      ...(record.heartbeat_interval_sec !== undefined ? { heartbeat_interval_sec: record.heartbeat_interval_sec } : {}),
    });
    if (!outcome.ok) {
      this.deps.log.error({ plugin_id: this.pluginId, errors: outcome.errors }, 'registry refused the capabilities listed by the MCP server');
      throw new Error(`registry refused the MCP tool list: ${formatIssues(outcome.errors)}`);
    }
    this.deps.log.info({ plugin_id: this.pluginId, capabilities: catalog.capabilities.length }, 'MCP tools listed into capabilities');
  }

  /** Lists the tools again now (servers that cannot notify changes); a no-op while not connected. */
  async relistNow(): Promise<void> {
    const session = this.session;
    if (!session || !this.connected || session.lost) return;
    await this.relist(session);
  }

  /** Calls one tool outside any invocation (an adapter reading context); rejects when not connected. */
  async callTool(name: string, args: Record<string, unknown>, timeoutMs: number): Promise<CallToolResult> {
    const session = this.session;
    if (!session || !this.connected || session.lost) throw new Error(this.lastProblem ?? `MCP server ${this.pluginId} is not connected`);
    return (await session.client.callTool({ name, arguments: args }, CallToolResultSchema, { timeout: timeoutMs })) as CallToolResult;
  }

  async invoke(call: AdapterCall): Promise<PluginResult> {
    const { request } = call;
    const fail = (error: string, error_code: PluginResult['error_code'] = 'adapter_error'): PluginResult => ({
      request_id: request.request_id,
      plugin_id: request.plugin_id,
      success: false,
      error,
      ...(error_code ? { error_code } : {}),
    });
    if (this.stopped) return fail(`MCP plugin ${this.pluginId} is stopped`, 'offline');
    if (!this.connected && !(await this.whenConnected(request.deadline - Date.now(), call.signal))) {
      return fail(this.lastProblem ?? `MCP server ${this.pluginId} is not connected`, call.signal.aborted ? 'cancelled' : 'stale');
    }
    const session = this.session;
    if (!session) return fail(`MCP server ${this.pluginId} is not connected`, 'stale');
    const toolName = session.catalog?.tool_by_capability.get(call.capability.id) ?? call.capability.id;
    const remaining = request.deadline - Date.now();
    if (remaining <= 0) return fail(`deadline passed before MCP tool ${toolName} was called`, 'timeout');
    const single = session.catalog?.single_tool;
    const args = single ? singleToolArguments(session.catalog?.input_schema_by_capability.get(call.capability.id) ?? {}, request) : request.parameters;
    try {
      const result = (await session.client.callTool({ name: toolName, arguments: args }, CallToolResultSchema, {
        signal: call.signal,
        timeout: remaining,
        maxTotalTimeout: remaining,
      })) as CallToolResult;
      const text = callResultText(result);
      if (result.isError) return { request_id: request.request_id, plugin_id: request.plugin_id, success: false, error: text || `MCP tool ${toolName} failed` };
      return {
        request_id: request.request_id,
        plugin_id: request.plugin_id,
        success: true,
        text,
        ...(result.structuredContent ? { data: JSON.parse(JSON.stringify(result.structuredContent)) as JsonValue } : {}),
      };
    } catch (error) {
      if (session.lost) return fail(session.lost);
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        return fail(this.withGarbageHint(session, `MCP tool ${toolName} did not answer within ${remaining} ms`), 'timeout');
      }
      if (call.signal.aborted) return fail(`MCP tool ${toolName} call cancelled`, 'cancelled');
      if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) return fail(this.explainLoss(session));
      const message = errorMessage(error);
      if (error instanceof TypeError || /fetch failed|ECONNREFUSED|ECONNRESET|socket/i.test(message)) {
        this.onLinkLost(session, `MCP server ${this.pluginId} unreachable: ${message}`);
        return fail(session.lost ?? message);
      }
      return fail(`MCP tool ${toolName} failed: ${message}`);
    }
  }

  async health(): Promise<HealthReport> {
    const session = this.session;
    if (!this.connected || !session) return { ok: false, detail: this.lastProblem ?? 'not connected' };
    try {
      await session.client.ping({ timeout: 3000 });
      return { ok: true, detail: `${session.catalog?.capabilities.length ?? 0} tools` };
    } catch (error) {
      return { ok: false, detail: `ping failed: ${errorMessage(error)}` };
    }
  }

  /** Closes the client and, for stdio, ends the server's whole process group. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.connected = false;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.wakeWaiters();
    const session = this.session;
    if (!session) return;
    session.lost ??= `MCP plugin ${this.pluginId} is stopping`;
    await session.client.close().catch(() => undefined);
    // client.close() closes the transport, but a transport whose connect never finished may not be attached.
    await session.transport.close().catch(() => undefined);
  }
}
