// `homeclaw mcp`: an MCP server on stdio for desktop clients, proxying to a running Core's /mcp
// endpoint (streamable HTTP, admin token). tools/list and tools/call are forwarded as they are, and
// tools/list_changed from the Core is passed on. The Core may restart: the upstream session is
// re-created on demand and the client is told to re-list, since a notification sent while the link
// was down is lost.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../log.js';
import { adminTokenPath } from './admin-token.js';
import { packageVersion } from '../kit/package-version.js';

export interface McpStdioProxyOptions {
  /** The Core's base URL (http://127.0.0.1:8765) or its full /mcp URL. */
  url: string;
  token: string;
  log: Logger;
  /** Defaults: process.stdin / process.stdout. */
  input?: Readable;
  output?: Writable;
  /** Upper bound for one forwarded tools/call; the Core's dispatcher applies the plugin deadline. Default 10 min. */
  call_timeout_ms?: number;
}

export interface McpStdioProxy {
  /** Resolves when the stdio client went away (stdin closed) or close() was called. */
  closed: Promise<void>;
  close(): Promise<void>;
}

const SERVER_INFO = { name: 'homeclaw-bus', version: packageVersion() };

export interface ProxySettings {
  url: string;
  token: string;
}

/**
 * Where the Core is and the token to use, from the environment (HOMECLAW_URL, else HOMECLAW_HTTP_HOST/PORT;
 * HOMECLAW_ADMIN_TOKEN, else <HOMECLAW_DATA_DIR or ./data>/admin.token);
 * a clear error when there is no token.
 */
export function proxySettingsFromEnv(env: NodeJS.ProcessEnv, cwd: string): ProxySettings | { error: string } {
  const url = env.HOMECLAW_URL ?? `http://${env.HOMECLAW_HTTP_HOST ?? '127.0.0.1'}:${env.HOMECLAW_HTTP_PORT ?? '8765'}`;
  if (env.HOMECLAW_ADMIN_TOKEN) return { url, token: env.HOMECLAW_ADMIN_TOKEN };
  const file = adminTokenPath(resolve(cwd, env.HOMECLAW_DATA_DIR ?? './data'));
  try {
    const token = readFileSync(file, 'utf8').trim();
    if (token) return { url, token };
  } catch {
    // explained below
  }
  return { error: `no admin token: set HOMECLAW_ADMIN_TOKEN or start the Core once so it writes ${file}` };
}

export function mcpEndpoint(url: string): URL {
  const parsed = new URL(url);
  if (!parsed.pathname.replace(/\/+$/, '').endsWith('/mcp')) parsed.pathname = `${parsed.pathname.replace(/\/+$/, '')}/mcp`;
  return parsed;
}

/** The link to the Core: one upstream MCP session, re-created when the Core forgot it or restarted. */
class UpstreamLink {
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private connectedOnce = false;

  constructor(
    private readonly endpoint: URL,
    private readonly token: string,
    private readonly log: Logger,
    private readonly onToolsChanged: () => void,
  ) {}

  private async connect(): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(this.endpoint, { requestInit: { headers: { authorization: `Bearer ${this.token}` } } });
    const client = new Client({ name: 'homeclaw-mcp-stdio', version: SERVER_INFO.version });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.onToolsChanged());
    client.onclose = () => {
      if (this.client === client) this.client = undefined;
    };
    try {
      await client.connect(transport);
    } catch (err) {
      await client.close().catch(() => undefined);
      throw new McpError(ErrorCode.InternalError, `cannot reach the HomeClaw Core at ${this.endpoint.href}: ${(err as Error).message}`);
    }
    this.client = client;
    if (this.connectedOnce) {
      this.log.info({ endpoint: this.endpoint.href }, 'reconnected to the Core; asking the client to re-list tools');
      this.onToolsChanged();
    }
    this.connectedOnce = true;
    return client;
  }

  private get(): Promise<Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /** Runs fn against the Core; when the session is gone (Core restarted, idle timeout) reconnects once and retries. */
  async run<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    const client = await this.get();
    try {
      return await fn(client);
    } catch (err) {
      if (err instanceof McpError) throw err; // an answer from the Core, not a broken link
      this.log.warn({ err: (err as Error).message }, 'Core link failed; reconnecting');
      if (this.client === client) this.client = undefined;
      await client.close().catch(() => undefined);
      return fn(await this.get());
    }
  }

  async start(): Promise<void> {
    await this.get();
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    // Ends the Core-side session (DELETE) instead of leaving it to the idle timeout.
    const transport = client.transport;
    if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}

export async function runMcpStdioProxy(options: McpStdioProxyOptions): Promise<McpStdioProxy> {
  const log = options.log.child({ room: 'api', mcp: 'stdio' });
  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: true } } });
  const announce = (): void => {
    server.sendToolListChanged().catch((err: unknown) => log.debug({ err: (err as Error).message }, 'list_changed not delivered'));
  };
  const upstream = new UpstreamLink(mcpEndpoint(options.url), options.token, log, announce);
  const callTimeout = options.call_timeout_ms ?? 10 * 60_000;

  server.setRequestHandler(ListToolsRequestSchema, (request) => upstream.run((client) => client.listTools(request.params)));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    upstream.run((client) =>
      // client.request rather than callTool: the result is passed on as the Core made it, unvalidated here.
      client.request({ method: 'tools/call', params: request.params }, CallToolResultSchema, { signal: extra.signal, timeout: callTimeout }),
    ),
  );

  // Connect early so a wrong URL or token shows up in the log at once; calls retry anyway.
  await upstream.start().catch((err: unknown) => log.error({ err: (err as Error).message }, 'HomeClaw Core not reachable yet'));

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  const transport = new StdioServerTransport(options.input, options.output);
  let closing = false;
  const close = async (): Promise<void> => {
    if (closing) return closed;
    closing = true;
    await upstream.close();
    await server.close().catch(() => undefined);
    resolveClosed();
  };
  transport.onclose = () => void close();
  (options.input ?? process.stdin).once('end', () => void close());
  await server.connect(transport);
  return { closed, close };
}
