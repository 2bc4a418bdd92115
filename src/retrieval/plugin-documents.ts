// What is indexed for a plugin, and how.
//
// Decision (measured on MetaTool, see scripts/bench/retrieval-quality.ts): index PER PLUGIN, with the
// plugin's identity as TWO short documents, plus one document per capability only when a plugin has
// several, plus one document per example utterance.
//  - Identity = a "name" document (the plugin's name, identifiers split into words) and a "plugin"
//    document (description, description_long, keywords, and the capabilities' names/descriptions/
//    parameter names). Two short vectors beat one mixed vector: a query may echo the name ("ask
//    FinanceNews...") or only paraphrase the description, and USE vectors of mixed text blur. The
//    identity score is 0.7·max + 0.3·mean of the two (multi-field scoring): measured +1.2 to +1.6 R@5
//    and +1.5 to +2 R@1 on single-tool queries, +1 R@5 on two-tool queries, across sample seeds.
//  - Capability documents let a multi-capability plugin ("lights": on/off/dim/colour) be found by the
//    phrasing of one capability and tell the caller WHICH capability matched (CapabilityMatch).
//  - Examples are embedded one per document: a user query is a short utterance, and max-similarity over
//    short utterances beats similarity to one long averaged text (USE vectors of long text blur).
// The dense score of a plugin is the max of its identity score and its capability/example documents.
// BM25 runs over one bag of words per plugin (all fields, examples included): lexical evidence adds up
// across fields.
import type { CapabilitySpec, PluginDescriptor } from '../protocol/types.js';
import { splitIdentifier } from './tokenize.js';

export type DocumentKind = 'name' | 'plugin' | 'capability' | 'example';

export interface IndexDocument {
  id: string;
  plugin_id: string;
  kind: DocumentKind;
  capability_id?: string;
  text: string;
}

/** Bump when the document layout changes: the collection is rebuilt instead of mixing layouts. */
export const INDEX_LAYOUT_VERSION = 2;
const MAX_EXAMPLES = 32;
const MAX_LONG_DESCRIPTION = 1_500;

export function capabilityText(descriptor: PluginDescriptor, capability: CapabilitySpec): string {
  const parameters = capability.parameters.map((p) => splitIdentifier(p.name)).join(', ');
  return [`${descriptor.name}: ${splitIdentifier(capability.name)}.`, capability.description, parameters ? `Parameters: ${parameters}.` : '']
    .filter(Boolean)
    .join(' ');
}

function pluginText(descriptor: PluginDescriptor): string {
  const parts = [descriptor.description];
  if (descriptor.description_long) parts.push(descriptor.description_long.slice(0, MAX_LONG_DESCRIPTION));
  if (descriptor.keywords?.length) parts.push(descriptor.keywords.join(', '));
  const caps = descriptor.capabilities;
  if (caps.length === 1) {
    const only = caps[0]!;
    if (only.description !== descriptor.description) parts.push(only.description);
    const parameters = only.parameters.map((p) => splitIdentifier(p.name)).join(', ');
    if (parameters) parts.push(`Parameters: ${parameters}.`);
  } else if (caps.length > 1) {
    parts.push(`Can: ${caps.map((c) => splitIdentifier(c.name)).join(', ')}.`);
  }
  return parts.filter((p) => p.trim() !== '').join(' ');
}

export function pluginDocuments(descriptor: PluginDescriptor): IndexDocument[] {
  const pid = descriptor.id;
  const docs: IndexDocument[] = [
    { id: `${pid}::name`, plugin_id: pid, kind: 'name', text: splitIdentifier(descriptor.name) },
    { id: `${pid}::plugin`, plugin_id: pid, kind: 'plugin', text: pluginText(descriptor) },
  ];
  if (descriptor.capabilities.length > 1) {
    for (const capability of descriptor.capabilities) {
      docs.push({
        id: `${pid}::cap::${capability.id}`,
        plugin_id: pid,
        kind: 'capability',
        capability_id: capability.id,
        text: capabilityText(descriptor, capability),
      });
    }
  }
  const examples = [...new Set((descriptor.examples ?? []).map((e) => e.trim()).filter(Boolean))].slice(0, MAX_EXAMPLES);
  examples.forEach((text, i) => {
    docs.push({ id: `${pid}::ex::${i}`, plugin_id: pid, kind: 'example', text });
  });
  return docs;
}

/**
 * What a document id says about its document (the ids pluginDocuments builds: `<plugin>::name`,
 * `<plugin>::plugin`, `<plugin>::cap::<capability>`, `<plugin>::ex::<n>`). Plugin and capability ids
 * cannot contain ':', so the id alone is enough and a query need not fetch every match's metadata.
 */
export function documentFromId(id: string): { plugin_id: string; kind: DocumentKind; capability_id?: string } | undefined {
  const cut = id.indexOf('::');
  if (cut <= 0) return undefined;
  const plugin_id = id.slice(0, cut);
  const rest = id.slice(cut + 2);
  if (rest === 'name' || rest === 'plugin') return { plugin_id, kind: rest };
  if (rest.startsWith('cap::') && rest.length > 5) return { plugin_id, kind: 'capability', capability_id: rest.slice(5) };
  if (rest.startsWith('ex::')) return { plugin_id, kind: 'example' };
  return undefined;
}

/** One bag of words per plugin for BM25: every field, examples included. */
export function pluginBm25Text(descriptor: PluginDescriptor): string {
  const parts = [splitIdentifier(descriptor.name), splitIdentifier(descriptor.id), descriptor.description];
  if (descriptor.description_long) parts.push(descriptor.description_long);
  if (descriptor.keywords) parts.push(...descriptor.keywords);
  if (descriptor.examples) parts.push(...descriptor.examples);
  for (const capability of descriptor.capabilities) {
    parts.push(splitIdentifier(capability.name));
    // A single-capability plugin often repeats its description; counting it twice would skew BM25's
    // term frequencies and length normalisation against plugins that do not.
    if (capability.description !== descriptor.description) parts.push(capability.description);
    for (const p of capability.parameters) parts.push(splitIdentifier(p.name));
  }
  return parts.join('\n');
}
