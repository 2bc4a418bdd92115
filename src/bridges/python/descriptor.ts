// Turns what a Python host reports about a plugin class, plus the folder's manifest or config file, into
// the canonical descriptor (through the existing HomeClaw and RAGFlow dialect normalizers).
//   plugin.yaml present         → the manifest; without capabilities, a RAGFlow class's tool becomes its one
//                                  capability, any other class gets the single entry point `run`.
//   config.yml with an id       → HomeClaw's legacy form: id, name, description from config.yml.
//   RAGFlow class, no manifest  → get_metadata() is the descriptor (its name is the plugin id).
//   other class, no manifest    → id from the instance's plugin_id or the folder name, description from the
//                                  instance or the class docstring.
// The version is the manifest's, else the metadata's, else the class's `_version_`.
import { basename } from 'node:path';
import { normalizeDescriptor } from '../../protocol/descriptor/normalize.js';
import { isPluginId } from '../../protocol/ids.js';
import type { CapabilitySpec, PluginConfig, PluginDescriptor } from '../../protocol/types.js';
import type { HostPluginInfo } from './protocol.js';
import { isPlainObject } from '../../kit/plain-object.js';
import { formatIssues } from '../../kit/format-issues.js';

export type DescriptorOutcome = { ok: true; descriptor: PluginDescriptor } | { ok: false; error: string; plugin_id?: string };

const LEGACY_KEYS = ['id', 'plugin_id', 'name', 'description', 'description_long', 'version', 'keywords', 'examples'];

function claimedId(raw: Record<string, unknown>): string | undefined {
  const id = raw.id ?? raw.plugin_id ?? raw.name;
  return isPluginId(id) ? id : undefined;
}

/**
 * get_metadata() as the RAGFlow dialect reads it. RAGFlow's earlier tools declared `parameters` as a JSON
 * Schema object ({type: object, properties, required}); that form becomes the parameter map first.
 */
export function ragflowInput(plugin: HostPluginInfo): { ok: true; input: Record<string, unknown> } | { ok: false; error: string } {
  if (!isPlainObject(plugin.metadata)) return { ok: false, error: `${plugin.class}.get_metadata() must return a dict` };
  const input: Record<string, unknown> = { ...plugin.metadata };
  const parameters = input.parameters;
  if (isPlainObject(parameters) && parameters.type === 'object' && isPlainObject(parameters.properties)) {
    const required = Array.isArray(parameters.required) ? parameters.required : [];
    input.parameters = Object.fromEntries(
      Object.entries(parameters.properties).map(([name, spec]) => [name, isPlainObject(spec) ? { ...spec, required: required.includes(name) } : spec]),
    );
  }
  if (input.version === undefined && input._version_ === undefined && plugin.version) input._version_ = plugin.version;
  return { ok: true, input };
}

/** The one capability a RAGFlow class offers, read from its metadata by the RAGFlow normalizer. */
function ragflowCapability(plugin: HostPluginInfo, pluginId: string | undefined): CapabilitySpec | { error: string } {
  const read = ragflowInput(plugin);
  if (!read.ok) return { error: read.error };
  const outcome = normalizeDescriptor({ ...read.input, ...(pluginId ? { id: pluginId } : {}) }, { source: 'built-in', default_type: 'python' });
  if (!outcome.ok) return { error: `${plugin.class}.get_metadata() is invalid: ${formatIssues(outcome.errors)}` };
  return outcome.descriptor.capabilities[0]!;
}

function checkMethods(descriptor: PluginDescriptor, plugin: HostPluginInfo): string | undefined {
  const methods = new Set(plugin.methods);
  if (plugin.kind === 'ragflow' && !methods.has('invoke')) return `${plugin.class} does not implement invoke()`;
  if (methods.has('invoke') || methods.has('run')) return undefined;
  const missing = descriptor.capabilities.filter((c) => !methods.has(c.id)).map((c) => `"${c.id}"`);
  if (missing.length === 0) return undefined;
  return `${plugin.class} has no method for capability ${missing.join(', ')} and no invoke() or run() to fall back on`;
}

function finish(raw: Record<string, unknown>, plugin: HostPluginInfo, config: Record<string, unknown>, what: string): DescriptorOutcome {
  raw.type = 'python';
  if (raw.version === undefined && plugin.version) raw.version = plugin.version;
  const outcome = normalizeDescriptor({ ...raw, config }, { source: 'built-in', default_type: 'python' });
  const id = claimedId(raw);
  if (!outcome.ok) return { ok: false, error: `${what} is invalid: ${formatIssues(outcome.errors)}`, ...(id ? { plugin_id: id } : {}) };
  const descriptor: PluginDescriptor = {
    ...outcome.descriptor,
    source: 'built-in',
    type: 'python',
    config: { ...outcome.descriptor.config, ...(config as PluginConfig) },
  };
  const missing = checkMethods(descriptor, plugin);
  if (missing) return { ok: false, error: missing, plugin_id: descriptor.id };
  return { ok: true, descriptor };
}

export interface FolderDescriptorInput {
  folder: string;
  manifest?: Record<string, unknown>;
  manifest_name?: string;
  /** A config file that names the plugin (legacy HomeClaw config.yml with an id), when there is no manifest. */
  legacy?: Record<string, unknown>;
  plugin: HostPluginInfo;
  config: Record<string, unknown>;
}

export function folderDescriptor(input: FolderDescriptorInput): DescriptorOutcome {
  const { plugin, folder } = input;
  const base =
    input.manifest ??
    (input.legacy ? Object.fromEntries(LEGACY_KEYS.filter((k) => input.legacy![k] !== undefined).map((k) => [k, input.legacy![k]])) : undefined);
  if (base) {
    const raw: Record<string, unknown> = { ...base };
    if (!input.manifest) raw.name ??= raw.id ?? raw.plugin_id;
    if (raw.capabilities === undefined && plugin.kind === 'ragflow') {
      const capability = ragflowCapability(plugin, claimedId(raw));
      if ('error' in capability) return { ok: false, error: capability.error, ...(claimedId(raw) ? { plugin_id: claimedId(raw)! } : {}) };
      raw.capabilities = [capability];
    }
    return finish(raw, plugin, input.config, input.manifest_name ?? 'config.yml');
  }
  if (plugin.kind === 'ragflow') {
    const read = ragflowInput(plugin);
    if (!read.ok) return read;
    return finish(read.input, plugin, input.config, `${plugin.class}.get_metadata()`);
  }
  const folderName = basename(folder);
  const id = plugin.plugin_id && isPluginId(plugin.plugin_id) ? plugin.plugin_id : folderName;
  const description = plugin.description ?? plugin.doc;
  if (!description) {
    return {
      ok: false,
      error: `${plugin.class} has no description: add a plugin.yaml, or id and description to config.yml, or a class docstring`,
      ...(isPluginId(id) ? { plugin_id: id } : {}),
    };
  }
  return finish({ id, name: plugin.name ?? plugin.class, description }, plugin, input.config, `${plugin.class} in ${folderName}`);
}

/** A class in a file under embedded_plugins/: its metadata is its whole descriptor. */
export function embeddedDescriptor(plugin: HostPluginInfo, config: Record<string, unknown>): DescriptorOutcome {
  const read = ragflowInput(plugin);
  if (!read.ok) return read;
  return finish(read.input, plugin, config, `${plugin.class}.get_metadata()`);
}
