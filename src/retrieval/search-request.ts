// Checks a search request once, for every way to ask (Core call, HTTP, CLI, MCP), so all of them
// answer bad input with the same clear text.

export const MAX_K = 50;
/** Longer queries are cut here: a user message this long carries its intent in its first lines. */
export const MAX_QUERY_CHARS = 2_000;

export type CheckedRequest = { ok: true; query: string; k: number; truncated: boolean; clamped: boolean } | { ok: false; error: string };

/** k may arrive as a number (Core, MCP) or a string (HTTP query string, CLI flag). */
export function checkSearchRequest(query: unknown, k: unknown, defaultK: number): CheckedRequest {
  if (typeof query !== 'string') return { ok: false, error: 'query must be a string' };
  if (query.trim() === '') return { ok: false, error: 'query is empty: say what the plugin should do' };
  let kValue: number;
  if (k === undefined || k === null || k === '') {
    kValue = defaultK;
  } else {
    kValue = typeof k === 'number' ? k : typeof k === 'string' && /^\s*-?\d+\s*$/.test(k) ? Number(k) : NaN;
    if (!Number.isInteger(kValue)) return { ok: false, error: `k must be a whole number between 1 and ${MAX_K}, got ${JSON.stringify(k)}` };
    if (kValue < 1) return { ok: false, error: `k must be at least 1, got ${kValue}` };
  }
  const clamped = kValue > MAX_K;
  const truncated = query.length > MAX_QUERY_CHARS;
  const cut = truncated ? safeCut(query.slice(0, MAX_QUERY_CHARS)) : query;
  return { ok: true, query: cut.trim(), k: Math.min(kValue, MAX_K), truncated, clamped };
}

/** Never leaves half of a surrogate pair (an emoji split in two) at the end. */
function safeCut(text: string): string {
  const last = text.charCodeAt(text.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? text.slice(0, -1) : text;
}
