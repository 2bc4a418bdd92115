// What a tools/call result says, as text for a PluginResult.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** The text of a tools/call result: text parts as they are, other parts as short placeholders. */
export function callResultText(result: CallToolResult): string {
  const parts: string[] = [];
  for (const item of result.content ?? []) {
    if (item.type === 'text') parts.push(item.text);
    else if (item.type === 'resource' && 'text' in item.resource && typeof item.resource.text === 'string') parts.push(item.resource.text);
    else if (item.type === 'resource' || item.type === 'resource_link') parts.push(`[resource ${'uri' in item ? item.uri : item.resource.uri}]`);
    else if (item.type === 'image' || item.type === 'audio') parts.push(`[${item.type} ${item.mimeType}, ${Math.round((item.data.length * 3) / 4)} bytes]`);
  }
  return parts.join('\n');
}
