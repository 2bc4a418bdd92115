// The JSON-lines protocol between the Core and a Python plugin host (src/bridges/python/host/). One JSON
// object per line, UTF-8, in both directions; the host writes its logs to stderr, never to stdout.
//
//   Core → host (stdin)                                  host → Core (stdout)
//   init    {protocol, mode, plugin_dir, module,          hello  {protocol, pid, python, plugins[], skipped[]}
//            class, config, manifest}                      fatal  {error, traceback?}   (then it exits)
//   invoke  {id, target, capability, params,              result {id, ok, value? | error, error_type?,
//            deadline, request}                                   traceback?, cancelled?, timed_out?}
//   cancel  {id}
//   (closing stdin ends the host)
//
// `id` is the request id; `target` names the plugin class (a file under embedded_plugins/ may hold several);
// `deadline` is absolute, in milliseconds since the Unix epoch, as in PluginRequest.
import type { JsonObject, PluginRequest } from '../../protocol/types.js';
import { isPlainObject } from '../../kit/plain-object.js';

export const PYTHON_HOST_PROTOCOL = 1;

export interface HostInit {
  type: 'init';
  protocol: typeof PYTHON_HOST_PROTOCOL;
  /** folder: one plugin folder (plugin.py or config.module); file: one file, every LLM tool class in it. */
  mode: 'folder' | 'file';
  plugin_dir: string;
  /** Folder mode: a file name relative to plugin_dir (or null: plugin.py, else every *.py); file mode: the absolute path. */
  module: string | null;
  /** Chooses one class when a module defines several. */
  class: string | null;
  /** The plugin's config (manifest config merged with its config file): the instance's `config`. */
  config: JsonObject;
  /** id/name/description from the manifest or config file, for HomeClaw built-ins' initialize(). */
  manifest: JsonObject | null;
}

export interface HostInvoke {
  type: 'invoke';
  id: string;
  target: string;
  capability: string;
  params: JsonObject;
  deadline: number;
  request: PluginRequest;
}

export interface HostCancel {
  type: 'cancel';
  id: string;
}

export type CoreToHost = HostInit | HostInvoke | HostCancel;

/** What the host found: one plugin class and how it describes itself. */
export interface HostPluginInfo {
  class: string;
  module: string;
  /** ragflow: LLMToolPlugin or get_metadata()+invoke(); homeclaw: BasePlugin subclass; generic: *Plugin with run(). */
  kind: 'ragflow' | 'homeclaw' | 'generic';
  /** The class's `_version_` (or `version`). */
  version: string | null;
  has_version_attribute: boolean;
  /** RAGFlow's plugin type of the class (llm_tools). */
  plugin_type: string | null;
  /** Public methods the plugin itself defines. */
  methods: string[];
  doc: string | null;
  /** get_metadata()'s answer (ragflow kind). */
  metadata?: unknown;
  /** The instance's plugin_id / description / config name after initialize() (homeclaw and generic kinds). */
  plugin_id?: string | null;
  description?: string | null;
  name?: string;
}

export interface HostHello {
  type: 'hello';
  protocol: number;
  pid: number;
  python: string;
  plugins: HostPluginInfo[];
  skipped: { class: string; reason: string }[];
}

export interface HostFatal {
  type: 'fatal';
  error: string;
  traceback?: string | null;
}

export interface HostResult {
  type: 'result';
  id: string;
  ok: boolean;
  value?: unknown;
  error?: string;
  error_type?: string;
  traceback?: string;
  cancelled?: boolean;
  /** The call's deadline passed inside the host (a coroutine awaited under it). */
  timed_out?: boolean;
}

export type HostToCore = HostHello | HostFatal | HostResult;

/** Parses one stdout line of the host; anything that is not a known message is reported, never thrown. */
export function parseHostLine(line: string): { ok: true; message: HostToCore } | { ok: false; problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, problem: `not JSON: "${line.slice(0, 120)}"` };
  }
  if (!isPlainObject(value)) return { ok: false, problem: 'not a JSON object' };
  switch (value.type) {
    case 'hello':
      if (typeof value.pid !== 'number' || !Array.isArray(value.plugins)) return { ok: false, problem: 'hello without pid or plugins' };
      if (!value.plugins.every((p) => isPlainObject(p) && typeof p.class === 'string' && Array.isArray(p.methods))) {
        return { ok: false, problem: 'hello with a malformed plugin entry' };
      }
      return { ok: true, message: { skipped: [], ...value } as unknown as HostHello };
    case 'fatal':
      return {
        ok: true,
        message: {
          type: 'fatal',
          error: typeof value.error === 'string' ? value.error : 'the host failed to start',
          traceback: typeof value.traceback === 'string' ? value.traceback : null,
        },
      };
    case 'result':
      if (typeof value.id !== 'string' || typeof value.ok !== 'boolean') return { ok: false, problem: 'result without id or ok' };
      return { ok: true, message: value as unknown as HostResult };
    default:
      return { ok: false, problem: `unknown message type ${JSON.stringify(value.type)}` };
  }
}
