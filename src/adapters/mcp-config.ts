// How a `type: mcp` plugin's config says where its MCP server is. Read from the descriptor's config,
// which came from a manifest or an HTTP registration, so everything is checked and explained.
import type { JsonValue, PluginConfig } from '../protocol/types.js';

export type McpTransportConfig =
  | { transport: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string }
  | { transport: 'sse'; url: string; headers: Record<string, string> }
  | { transport: 'streamable-http'; url: string; headers: Record<string, string> };

export interface McpPluginSettings {
  connection: McpTransportConfig;
  /** The single-tool form: the one tool that receives the whole PluginRequest. */
  single_tool?: string;
}

export type McpConfigOutcome = { ok: true; settings: McpPluginSettings } | { ok: false; error: string };

function stringRecord(value: JsonValue | undefined, what: string): Record<string, string> | string {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) return `${what} must be an object of strings`;
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'string' && typeof item !== 'number' && typeof item !== 'boolean') {
      return `${what}.${key} must be a string`;
    }
    out[key] = String(item);
  }
  return out;
}

function httpUrl(value: JsonValue | undefined): string | { error: string } {
  if (typeof value !== 'string' || value.length === 0) return { error: 'config.url (the MCP server URL) is required' };
  try {
    const parsed = new URL(value);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      return { error: `config.url must be http(s), got ${parsed.protocol}` };
    }
    return parsed.toString();
  } catch {
    return { error: `config.url is not a valid URL: ${value}` };
  }
}

/** Reads `config.transport` (stdio | sse | streamable-http | http) and its settings. */
export function readMcpConfig(config: PluginConfig): McpConfigOutcome {
  const rawTransport = config.transport ?? (config.command !== undefined ? 'stdio' : undefined);
  const singleToolValue = config.tool ?? config.handle_tool;
  if (singleToolValue !== undefined && (typeof singleToolValue !== 'string' || singleToolValue.length === 0)) {
    return { ok: false, error: 'config.tool (or config.handle_tool) must be a tool name' };
  }
  const single_tool = typeof singleToolValue === 'string' ? singleToolValue : undefined;

  if (rawTransport === 'stdio') {
    if (typeof config.command !== 'string' || config.command.length === 0) {
      return { ok: false, error: 'config.command is required for the stdio transport' };
    }
    const argsValue = config.args ?? [];
    if (!Array.isArray(argsValue) || !argsValue.every((a) => typeof a === 'string' || typeof a === 'number')) {
      return { ok: false, error: 'config.args must be an array of strings' };
    }
    const env = stringRecord(config.env, 'config.env');
    if (typeof env === 'string') return { ok: false, error: env };
    if (config.cwd !== undefined && typeof config.cwd !== 'string') return { ok: false, error: 'config.cwd must be a string' };
    return {
      ok: true,
      settings: {
        connection: {
          transport: 'stdio',
          command: config.command,
          args: argsValue.map(String),
          env,
          ...(typeof config.cwd === 'string' ? { cwd: config.cwd } : {}),
        },
        ...(single_tool ? { single_tool } : {}),
      },
    };
  }
  if (rawTransport === 'sse' || rawTransport === 'streamable-http' || rawTransport === 'http') {
    // HomeClaw manifests call the SSE address base_url; accept both spellings.
    const url = httpUrl(config.url ?? config.base_url);
    if (typeof url !== 'string') return { ok: false, error: url.error };
    const headers = stringRecord(config.headers, 'config.headers');
    if (typeof headers === 'string') return { ok: false, error: headers };
    return {
      ok: true,
      settings: {
        connection: { transport: rawTransport === 'sse' ? 'sse' : 'streamable-http', url, headers },
        ...(single_tool ? { single_tool } : {}),
      },
    };
  }
  return {
    ok: false,
    error: `config.transport must be stdio, sse, streamable-http or http (got ${JSON.stringify(rawTransport ?? null)})`,
  };
}

/** Two configs that connect the same way need no reconnect when a descriptor is re-registered. */
export function connectionFingerprint(settings: McpPluginSettings): string {
  return JSON.stringify(settings);
}
