// Reads what Home Assistant's GetLiveContext tool answers: the text of its tool call is the JSON
// {"success": true, "result": "Live Context: An overview of the areas and the devices in this smart
// home:\n<YAML list>"}, where each YAML item is {names, domain, state, areas?, attributes?}; names and
// areas are comma-separated (an entity's aliases, an area's aliases). Only names, domain and areas are
// kept: states change all the time and must not make the plugin's indexed text change with them.
import { parse as parseYaml } from 'yaml';

export interface ExposedEntity {
  /** The entity's name first, then its aliases. */
  names: string[];
  domain: string;
  /** The area's name first, then its aliases; empty when the entity has no area. */
  areas: string[];
}

export type LiveContextOutcome = { ok: true; entities: ExposedEntity[] } | { ok: false; error: string };

/** A home with more exposed entities than this is indexed by its first ones. */
export const MAX_ENTITIES = 2_000;

const PREAMBLE = /^[^\n]*Context:[^\n]*\n/;

function splitList(value: unknown): string[] {
  if (typeof value !== 'string' && typeof value !== 'number') return [];
  return String(value)
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
}

/** The YAML body: unwrapped from the tool's JSON envelope when present, without the preamble line. */
function bodyOf(text: string): { ok: true; body: string } | { ok: false; error: string } {
  let body = text.trim();
  if (body.startsWith('{')) {
    let envelope: unknown;
    try {
      envelope = JSON.parse(body);
    } catch {
      return { ok: false, error: 'GetLiveContext answered with malformed JSON' };
    }
    if (typeof envelope !== 'object' || envelope === null) return { ok: false, error: 'GetLiveContext answered with an unexpected value' };
    const { success, result, error } = envelope as Record<string, unknown>;
    if (success === false) return { ok: false, error: typeof error === 'string' ? error : 'GetLiveContext reported a failure' };
    if (typeof result !== 'string') return { ok: false, error: 'GetLiveContext answered without a result text' };
    body = result;
  }
  return { ok: true, body: body.replace(PREAMBLE, '') };
}

export function parseLiveContext(text: string): LiveContextOutcome {
  const body = bodyOf(text);
  if (!body.ok) return body;
  if (body.body.trim() === '' || body.body.trim() === '[]') return { ok: true, entities: [] };
  let items: unknown;
  try {
    items = parseYaml(body.body);
  } catch (error) {
    return { ok: false, error: `GetLiveContext's device list is not YAML: ${(error as Error).message}` };
  }
  if (!Array.isArray(items)) return { ok: false, error: "GetLiveContext's device list is not a list" };
  const entities: ExposedEntity[] = [];
  for (const item of items.slice(0, MAX_ENTITIES)) {
    if (typeof item !== 'object' || item === null) continue;
    const fields = item as Record<string, unknown>;
    const names = splitList(fields.names);
    if (names.length === 0 || typeof fields.domain !== 'string') continue;
    entities.push({ names, domain: fields.domain, areas: splitList(fields.areas) });
  }
  return { ok: true, entities };
}
