// Slash commands work with or without an LLM: /help, /plugins, and /<plugin> [capability] key=value ...
// Values stay strings; the resolver coerces them against the capability schema ("42" → 42).
import type { JsonObject } from '../protocol/types.js';

export type SlashCommand =
  | { kind: 'help' }
  | { kind: 'plugins' }
  | { kind: 'call'; plugin_id: string; capability_id?: string; parameters: JsonObject }
  | { kind: 'invalid'; message: string };

export const SLASH_USAGE = '/<plugin> <capability> key=value ...';

export function isSlashCommand(text: string): boolean {
  return text.trimStart().startsWith('/');
}

/** Splits on whitespace, honouring "double" and 'single' quotes (also inside key="a b"), with \" escapes. */
export function tokenize(text: string): { ok: true; tokens: string[] } | { ok: false; error: string } {
  const tokens: string[] = [];
  let current = '';
  let inToken = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quote) {
      if (ch === '\\' && i + 1 < text.length && (text[i + 1] === quote || text[i + 1] === '\\')) {
        current += text[++i];
      } else if (ch === quote) {
        quote = null;
      } else {
        current += ch;
      }
      continue;
    }
    if (ch === '"' || ch === "'") {
      quote = ch;
      inToken = true;
    } else if (/\s/.test(ch)) {
      if (inToken) tokens.push(current);
      current = '';
      inToken = false;
    } else {
      current += ch;
      inToken = true;
    }
  }
  if (quote) return { ok: false, error: `unclosed ${quote} quote` };
  if (inToken) tokens.push(current);
  return { ok: true, tokens };
}

export function parseSlashCommand(text: string): SlashCommand {
  const body = text.trim().slice(1);
  const tokenized = tokenize(body);
  if (!tokenized.ok) return { kind: 'invalid', message: `Could not read the command: ${tokenized.error}. Usage: ${SLASH_USAGE}` };
  const [head, ...rest] = tokenized.tokens;
  if (!head) return { kind: 'invalid', message: `Empty command. Usage: ${SLASH_USAGE}; /help lists the commands.` };
  const name = head.toLowerCase();
  if (name === 'help' || name === '?') return { kind: 'help' };
  if (name === 'plugins') return { kind: 'plugins' };
  let capabilityId: string | undefined;
  const parameters: JsonObject = {};
  const problems: string[] = [];
  rest.forEach((token, index) => {
    const eq = token.indexOf('=');
    if (eq < 0) {
      if (index === 0) capabilityId = token;
      else problems.push(`"${token}" is not key=value`);
      return;
    }
    const key = token.slice(0, eq).trim();
    if (!key) {
      problems.push(`"${token}" has no parameter name`);
      return;
    }
    parameters[key] = token.slice(eq + 1);
  });
  if (problems.length > 0) return { kind: 'invalid', message: `Could not read the command: ${problems.join('; ')}. Usage: ${SLASH_USAGE}` };
  return { kind: 'call', plugin_id: name, ...(capabilityId ? { capability_id: capabilityId } : {}), parameters };
}
