// Routing without an LLM: the top retrieved capability takes the message when its evidence clears the
// threshold; a modest extractor may fill ONE required free-text parameter from the message.
//
// Which score is compared (calibrated on the shipped built-ins with everyday and unrelated messages): the fused
// `hit.score` is NOT usable. In hybrid mode it is a per-query z-score, relative to the other candidates,
// so the best of several bad matches still scores high ("good night" → buy 1.19, "thanks" → notes 1.13,
// while "is it sunny in Rome" → weather 1.38); in BM25-only mode it is a raw BM25 score. Absolute
// evidence is used instead, on the same scale in both modes:
// - the top hit's raw BM25 score (`bm25_score`) must reach `threshold` (config no_llm_threshold): every
//   everyday request to a built-in scored ≥ 1.10, every unrelated message 0 except "tell me a joke"
//   (1.63 on "tell", a word of the time plugin's examples);
// - in hybrid mode its dense cosine similarity (`dense_score`, USE-lite) must also reach
//   NO_LLM_MIN_DENSE: requests scored 0.44–1.00 (one outlier 0.33), unrelated messages 0.29–0.53 with
//   zero lexical evidence, "tell me a joke" 0.30 — so the joke is no longer sent to the time plugin.
// Hits without a bm25_score (other PluginSearchApi implementations) fall back to `score`.
//
// Extractor limits (by design, documented for users): it only fills a capability's single required
// string parameter that nothing else can fill (no profile_key, config_key, system_key or default); it
// keeps the words after the first word that names the plugin (its id, name, keywords, capability id or
// name), minus leading filler ("me", "some", "a", "the", "in", ...) and trailing politeness/time words
// ("please", "today", ...). No trigger word → nothing is filled and the resolver asks. It does not
// understand negation, several items, quantities as numbers, or parameters of other types.
import type { CapabilitySpec, JsonObject, ParameterSpec } from '../protocol/types.js';
import type { PluginRecord } from '../registry/record.js';
import type { PluginHit, SearchResponse } from '../retrieval/search-api.js';

export type NoLlmDecision =
  | { kind: 'route'; record: PluginRecord; capability: CapabilitySpec; explicit: JsonObject; score: number }
  | { kind: 'suggest'; hits: PluginHit[] };

const LEADING_FILLER = new Set([
  'me',
  'us',
  'some',
  'a',
  'an',
  'the',
  'that',
  'this',
  'in',
  'for',
  'at',
  'of',
  'to',
  'please',
  'my',
  'our',
  'about',
  'on',
  'is',
  'it',
  'what',
  "what's",
  'whats',
  'how',
  'like',
  'with',
  'new',
  'more',
  'down',
  'up',
]);
const TRAILING_FILLER = new Set(['please', 'thanks', 'thank', 'you', 'today', 'tomorrow', 'now', 'tonight', 'for', 'me', 'us']);

/** Minimum dense cosine similarity of the top hit in hybrid mode (USE-lite scale). */
export const NO_LLM_MIN_DENSE = 0.4;

/** Whether a hit carries enough absolute evidence to take a message without an LLM. */
export function clearsNoLlmThreshold(hit: PluginHit, threshold: number, minDense: number = NO_LLM_MIN_DENSE): boolean {
  const lexical = hit.bm25_score ?? hit.score;
  if (!(lexical >= threshold)) return false;
  return hit.dense_score === undefined || hit.dense_score >= minDense;
}

export function chooseNoLlmRoute(response: SearchResponse, threshold: number, minDense: number = NO_LLM_MIN_DENSE): NoLlmDecision {
  const top = response.hits[0];
  if (!top || !clearsNoLlmThreshold(top, threshold, minDense)) return { kind: 'suggest', hits: response.hits };
  const capabilities = top.record.descriptor.capabilities;
  const capabilityId = top.capabilities[0]?.capability_id;
  const capability = capabilities.find((c) => c.id === capabilityId) ?? capabilities[0];
  if (!capability) return { kind: 'suggest', hits: response.hits };
  return { kind: 'route', record: top.record, capability, explicit: {}, score: top.score };
}

/** The one parameter the free text may fill, or undefined when there is none or more than one. */
export function freeTextParameter(capability: CapabilitySpec): ParameterSpec | undefined {
  const candidates = capability.parameters.filter(
    (p) =>
      p.required &&
      p.type === 'string' &&
      p.profile_key === undefined &&
      p.config_key === undefined &&
      p.system_key === undefined &&
      p.default === undefined &&
      (p.enum === undefined || p.enum.length === 0),
  );
  return candidates.length === 1 ? candidates[0] : undefined;
}

function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9'_-]+/)
    .filter((w) => w.length > 0);
}

function triggerWords(record: PluginRecord, capability: CapabilitySpec): Set<string> {
  const d = record.descriptor;
  const sources = [d.id, d.name, ...(d.keywords ?? []), capability.id, capability.name];
  const triggers = new Set<string>();
  for (const source of sources) {
    for (const word of words(source.replace(/[_-]/g, ' '))) {
      if (word.length >= 3 && !['plugin', 'the', 'and', 'for', 'get', 'current'].includes(word)) triggers.add(word);
    }
  }
  return triggers;
}

/** A crude English stem, enough to match "notes"/"note", "buying"/"buy", "ordered"/"order". */
function stem(word: string): string {
  if (word.length <= 4) return word;
  for (const suffix of ['ing', 'ed', 's']) {
    if (word.endsWith(suffix)) return word.slice(0, -suffix.length);
  }
  return word;
}

/** Extracts a value for the capability's single free-text parameter from the message, if it can. */
export function extractFreeText(record: PluginRecord, capability: CapabilitySpec, text: string): JsonObject {
  const parameter = freeTextParameter(capability);
  if (!parameter) return {};
  const triggers = triggerWords(record, capability);
  // Keep the original spelling of the value (e.g. "Paris"), so tokens are split on the raw text.
  const tokens = text.trim().split(/\s+/);
  const normalised = tokens.map((t) => t.toLowerCase().replace(/[^a-z0-9'_-]/g, ''));
  const stems = new Set([...triggers].map(stem));
  const triggerIndex = normalised.findIndex((w) => triggers.has(w) || stems.has(stem(w)));
  if (triggerIndex < 0) return {};
  let rest = tokens.slice(triggerIndex + 1);
  let restNorm = normalised.slice(triggerIndex + 1);
  while (restNorm.length > 0 && LEADING_FILLER.has(restNorm[0] as string)) {
    rest = rest.slice(1);
    restNorm = restNorm.slice(1);
  }
  while (restNorm.length > 0 && TRAILING_FILLER.has(restNorm[restNorm.length - 1] as string)) {
    rest = rest.slice(0, -1);
    restNorm = restNorm.slice(0, -1);
  }
  const value = rest.join(' ').replace(/^[\s"'«“]+|[\s"'»”.!?,;:]+$/g, '');
  if (!value) return {};
  return { [parameter.name]: value };
}

/** The reply when nothing clears the threshold: the closest plugins and how to call them. */
export function describeSuggestions(hits: PluginHit[], reason: string): string {
  if (hits.length === 0) return `${reason} No plugin matches that. Type /plugins to see them all, or /help.`;
  const lines = [`${reason} The closest plugins are:`];
  for (const hit of hits.slice(0, 5)) {
    const d = hit.record.descriptor;
    const capabilityId = hit.capabilities[0]?.capability_id ?? d.capabilities[0]?.id;
    const capability = d.capabilities.find((c) => c.id === capabilityId);
    const example = capability ? usageOf(d.id, capability) : `/${d.id}`;
    lines.push(`- ${d.id}: ${d.description} — try: ${example}`);
  }
  return lines.join('\n');
}

export function usageOf(pluginId: string, capability: CapabilitySpec): string {
  const params = capability.parameters.filter((p) => p.required && p.system_key === undefined).map((p) => `${p.name}=<${p.type}>`);
  return [`/${pluginId}`, capability.id, ...params].join(' ');
}
