// Shared pieces of the identity and policy fault tests: HTTP calls with any bearer token, the `homeclaw`
// CLI as a child process, an MCP client with a given token, and a small HTTP "lock" plugin that counts
// what it is sent (so a test can prove a refused call never reached it).
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { REPO_ROOT } from '../e2e/helpers.js';

const run = promisify(execFile);
const CLI = join(REPO_ROOT, 'dist', 'src', 'cli.js');

export interface HttpAnswer<T = Record<string, unknown>> {
  status: number;
  body: T;
}

/** fetch against the Core with the given bearer token (none when token is undefined). */
export async function callApi<T = Record<string, unknown>>(
  baseUrl: string,
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
): Promise<HttpAnswer<T>> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `homeclaw <args>` (compiled CLI) against a Core. */
export async function homeclaw(args: string[], env: Record<string, string>): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

export async function mcpClient(baseUrl: string, token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const client = new Client({ name: 'fault-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

export interface LockServer {
  url: string;
  /** Every PluginRequest received on POST /run, in order. */
  requests: { capability_id: string; user_id?: string; parameters: Record<string, unknown> }[];
  descriptor(extra?: { requiresConfirmation?: boolean }): Record<string, unknown>;
  close(): Promise<void>;
}

/** An HTTP plugin "lock" (unlock, status) that answers every call and records it. */
export async function startLockServer(id = 'lock'): Promise<LockServer> {
  const requests: LockServer['requests'] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
        return;
      }
      const request = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as {
        request_id: string;
        plugin_id: string;
        capability_id: string;
        user_id?: string;
        parameters: Record<string, unknown>;
      };
      requests.push({
        capability_id: request.capability_id,
        ...(request.user_id !== undefined ? { user_id: request.user_id } : {}),
        parameters: request.parameters,
      });
      const text = request.capability_id === 'unlock' ? `The ${String(request.parameters.door ?? 'front')} door is unlocked.` : 'All doors are locked.';
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ request_id: request.request_id, plugin_id: request.plugin_id, success: true, text }));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    descriptor: (extra = {}) => ({
      id,
      name: 'Door lock',
      description: 'Locks and unlocks the doors of the house.',
      examples: ['unlock the front door', 'open the door'],
      type: 'http',
      health_check_url: `${url}/health`,
      config: { base_url: url, path: '/run', timeout_sec: 5 },
      capabilities: [
        {
          id: 'unlock',
          name: 'Unlock',
          description: 'Unlock a door.',
          parameters: [{ name: 'door', type: 'string', required: false, default: 'front' }],
          ...(extra.requiresConfirmation === false ? {} : { requires_confirmation: true }),
        },
        { id: 'status', name: 'Status', description: 'Tell whether the doors are locked.', parameters: [] },
      ],
    }),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function settle(ms = 300): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}
