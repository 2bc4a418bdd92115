// PluginRequest.chat_context: the session's recent messages as plain text, one "user: ..." or
// "assistant: ..." line each, oldest first. Bounded so a long conversation never bloats a request:
// the newest lines are kept and each is cut to a reasonable length.
import type { LlmMessage } from './llm-client.js';

const MAX_LINE_CHARS = 500;
const MAX_TOTAL_CHARS = 4000;

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_LINE_CHARS ? `${flat.slice(0, MAX_LINE_CHARS - 1)}…` : flat;
}

/** undefined when the session has no earlier messages. */
export function chatContextOf(history: readonly LlmMessage[]): string | undefined {
  const lines: string[] = [];
  let total = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i]!;
    if ((message.role !== 'user' && message.role !== 'assistant') || !message.content) continue;
    const line = `${message.role}: ${oneLine(message.content)}`;
    if (total + line.length + 1 > MAX_TOTAL_CHARS) break;
    lines.unshift(line);
    total += line.length + 1;
  }
  return lines.length > 0 ? lines.join('\n') : undefined;
}
