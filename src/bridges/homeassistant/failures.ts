// What a failure to reach Home Assistant's MCP server means for the user. Home Assistant answers 401
// when the token is refused (or its user is not an administrator while the integration requires one)
// and 404 while the Model Context Protocol Server integration is not set up. A refused token cannot
// fix itself (the token comes from the config), and every retry would show up in Home Assistant as a
// failed login, so it is not retried; a missing integration can be added at any time, so it is.
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FailureVerdict } from '../../adapters/mcp-connection.js';

export const TOKEN_REFUSED = 'Home Assistant refused the token';

function networkCode(error: unknown): string | undefined {
  const cause = error instanceof Error ? (error as Error & { cause?: unknown }).cause : undefined;
  if (cause && typeof cause === 'object' && typeof (cause as { code?: unknown }).code === 'string') return (cause as { code: string }).code;
  return undefined;
}

export function classifyHomeAssistantFailure(baseUrl: string, mcpUrl: string): (error: unknown) => FailureVerdict | undefined {
  return (error) => {
    if (error instanceof StreamableHTTPError) {
      if (error.code === 401 || error.code === 403) {
        return {
          state: 'error',
          retry: false,
          reason:
            `${TOKEN_REFUSED} (HTTP ${error.code} from ${mcpUrl}): create a long-lived access token in Home Assistant ` +
            '(your profile → Security → Long-lived access tokens), set it as HOMECLAW_HA_TOKEN (homeassistant.token) and ' +
            "restart the Core; when the MCP Server integration requires an administrator, the token's user must be one",
        };
      }
      if (error.code === 404) {
        return {
          state: 'error',
          retry: true,
          reason:
            `Home Assistant has no MCP server at ${mcpUrl} (HTTP 404): enable the "Model Context Protocol Server" integration ` +
            '(Settings → Devices & services → Add integration → Model Context Protocol Server, with the Assist API); ' +
            'the Core keeps retrying and connects once it is there',
        };
      }
      if ((error.code ?? 0) >= 500) return { state: 'stale', retry: true, reason: `Home Assistant at ${baseUrl} answered HTTP ${error.code}; retrying` };
      return undefined;
    }
    const code = networkCode(error);
    if (code || (error instanceof TypeError && /fetch failed/i.test(error.message))) {
      return { state: 'stale', retry: true, reason: `Home Assistant at ${baseUrl} is unreachable (${code ?? (error as Error).message}); retrying` };
    }
    return undefined;
  };
}
