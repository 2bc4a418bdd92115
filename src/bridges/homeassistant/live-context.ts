// Reads what Home Assistant's GetLiveContext tool answers: the text of its tool call is the JSON
// {"success": true, "result": "Live Context: An overview of the areas and the devices in this smart
// home:\n<YAML list>"}, where each YAML item is {names, domain, state, areas?, attributes?}; names and
// areas are comma-separated (an entity's aliases, an area's aliases). Only names, domain and areas are
// kept: states change all the time and must not make the plugin's indexed text change with them.
// A big home's list is hundreds of kilobytes of YAML, which takes the YAML parser about a second: it is
// parsed in a worker thread, so the event loop never waits for it.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

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
const PARSE_TIMEOUT_MS = 30_000;

// The worker runs this CommonJS source; the YAML parser is loaded by its resolved path.
const YAML_MODULE = createRequire(import.meta.url).resolve('yaml');
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { parse } = require(${JSON.stringify(YAML_MODULE)});
try {
  parentPort.postMessage({ ok: true, value: parse(workerData) });
} catch (error) {
  parentPort.postMessage({ ok: false, error: String(error && error.message || error) });
}`;

function parseYamlOffThread(text: string): Promise<{ ok: true; value: unknown } | { ok: false; error: string }> {
  return new Promise((resolve) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: text });
    const finish = (outcome: { ok: true; value: unknown } | { ok: false; error: string }): void => {
      clearTimeout(timer);
      resolve(outcome);
      void worker.terminate();
    };
    const timer = setTimeout(() => finish({ ok: false, error: `parsing took longer than ${PARSE_TIMEOUT_MS} ms` }), PARSE_TIMEOUT_MS);
    worker.once('message', (message: { ok: true; value: unknown } | { ok: false; error: string }) => finish(message));
    worker.once('error', (error) => finish({ ok: false, error: error.message }));
  });
}

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

export async function parseLiveContext(text: string): Promise<LiveContextOutcome> {
  const body = bodyOf(text);
  if (!body.ok) return body;
  if (body.body.trim() === '' || body.body.trim() === '[]') return { ok: true, entities: [] };
  const parsed = await parseYamlOffThread(body.body);
  if (!parsed.ok) return { ok: false, error: `GetLiveContext's device list is not YAML: ${parsed.error}` };
  const items = parsed.value;
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
