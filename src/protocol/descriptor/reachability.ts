// A descriptor must say how the Core reaches the plugin, or every call to it would fail. These checks
// run on every registration path (HTTP API, manifests in plugin folders, MQTT), so an unusable plugin is
// refused with the missing field named instead of being stored as online.
import type { JsonValue, PluginDescriptor, ValidationIssue } from '../types.js';
import { isAbsoluteHttpUrl } from './plugin-fields.js';

const MCP_URL_TRANSPORTS = ['sse', 'streamable-http', 'http'];

function nonEmptyString(value: JsonValue | undefined): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

function httpProblems(descriptor: PluginDescriptor): ValidationIssue[] {
  const baseUrl = descriptor.config['base_url'];
  if (baseUrl !== undefined && baseUrl !== null) {
    if (typeof baseUrl === 'string' && isAbsoluteHttpUrl(baseUrl)) return [];
    return [{ path: '/config/base_url', message: `must be an absolute http(s) URL, not ${JSON.stringify(baseUrl)}` }];
  }
  // Without a base URL every capability must carry its own absolute URL.
  const relative = descriptor.capabilities.filter((c) => !(c.path && isAbsoluteHttpUrl(c.path)));
  if (relative.length === 0 && descriptor.capabilities.length > 0) return [];
  return [
    {
      path: '/config/base_url',
      message:
        'base_url is required for http plugins: the Core sends each call to base_url + path ' +
        `(give "base_url": "http://host:port" or config.base_url${relative.length < descriptor.capabilities.length ? `, or an absolute URL as the path of capability ${relative.map((c) => c.id).join(', ')}` : ''})`,
    },
  ];
}

function mcpProblems(descriptor: PluginDescriptor): ValidationIssue[] {
  const config = descriptor.config;
  const transport = config['transport'];
  const hasCommand = nonEmptyString(config['command']);
  const url = config['url'] ?? config['base_url'];
  if (transport === undefined || transport === null) {
    if (hasCommand) return [];
    return [
      {
        path: '/config/command',
        message: 'mcp plugins need config.command (a stdio server the Core starts) or config.transport sse | streamable-http with config.url',
      },
    ];
  }
  if (transport === 'stdio') {
    return hasCommand ? [] : [{ path: '/config/command', message: 'command is required for the stdio transport: the MCP server the Core starts' }];
  }
  if (typeof transport === 'string' && MCP_URL_TRANSPORTS.includes(transport)) {
    if (typeof url === 'string' && isAbsoluteHttpUrl(url)) return [];
    return [{ path: '/config/url', message: `url is required for the ${transport} transport: the MCP server's http(s) address` }];
  }
  return [{ path: '/config/transport', message: `must be stdio, sse or streamable-http, not ${JSON.stringify(transport)}` }];
}

/** What is missing for the Core to reach this plugin; empty when nothing is. */
export function reachabilityProblems(descriptor: PluginDescriptor): ValidationIssue[] {
  switch (descriptor.type) {
    case 'http':
      return httpProblems(descriptor);
    case 'subprocess':
      return nonEmptyString(descriptor.config['command'])
        ? []
        : [{ path: '/config/command', message: 'command is required for subprocess plugins: the program the Core starts for each call' }];
    case 'mcp':
      return mcpProblems(descriptor);
    default:
      return [];
  }
}
