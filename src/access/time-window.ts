// Points in time as people type them for the audit log: "1h", "30m", "7d" (that long ago), an ISO date
// or date-time ("2026-11-26", "2026-11-26T14:00:00Z"), or milliseconds since the epoch.

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const RELATIVE = /^(\d{1,9})\s*([smhdw])$/i;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

export type ParsedTime = { ok: true; ms: number } | { ok: false; error: string };

export function parsePointInTime(text: string, now: number = Date.now()): ParsedTime {
  const value = text.trim();
  const relative = RELATIVE.exec(value);
  if (relative) return { ok: true, ms: now - Number(relative[1]) * UNIT_MS[relative[2]!.toLowerCase()]! };
  if (/^\d{10,16}$/.test(value)) return { ok: true, ms: Number(value) };
  if (ISO_DATE.test(value)) {
    const ms = Date.parse(value);
    if (Number.isFinite(ms)) return { ok: true, ms };
  }
  return {
    ok: false,
    error: `"${text}" is not a time: use a duration ago (30s, 15m, 1h, 7d, 2w), an ISO date or date-time (2026-11-26, 2026-11-26T14:00:00Z) or epoch milliseconds`,
  };
}
