// The adapter for built-in plugins that run inside the Core process (type 'inline'). The loader
// installs one LoadedBuiltin per plugin id; invoke() calls its handler with a BuiltinContext. A
// handler that throws becomes a plugin_error result; one that hangs is abandoned when the
// dispatcher aborts the signal at the deadline (the Core keeps running either way).
import type { Logger } from '../log.js';
import type { JsonObject } from '../protocol/types.js';
import type { PluginResult } from '../protocol/types.js';
import type { AdapterCall, HealthReport, PluginAdapter } from './adapter.js';
import type { BuiltinContext, BuiltinNotification, BuiltinNotify, BuiltinNotifyOutcome } from './builtin-module.js';
import type { PluginRecord } from '../registry/record.js';
import { coerceResult, failure } from './plugin-result.js';
import { errorMessage } from '../kit/error-message.js';

/** One loaded built-in: its handlers keyed by capability id. */
export interface LoadedBuiltin {
  plugin_id: string;
  data_dir: string;
  /** Calls one capability; may return anything coerceResult understands, may throw. */
  call(capabilityId: string, params: JsonObject, ctx: BuiltinContext): Promise<unknown>;
  /** Releases what the module holds (class instances with dispose()); called on unload/reload. */
  dispose?(): Promise<void> | void;
}

export interface InlineAdapter extends PluginAdapter {
  install(loaded: LoadedBuiltin): void;
  uninstall(pluginId: string): void;
  isInstalled(pluginId: string): boolean;
}

export interface InlineAdapterOptions {
  log: Logger;
  /** Delivers a built-in's message for a user (the Core's notifier); without it notify() reports that. */
  notify?: (pluginId: string, notification: BuiltinNotification) => Promise<BuiltinNotifyOutcome>;
}

/** notify() for one built-in: its own id is the sender, so the user's policy toward it applies. */
export function notifyFor(options: Pick<InlineAdapterOptions, 'notify'>, pluginId: string): BuiltinNotify {
  return (notification) =>
    options.notify ? options.notify(pluginId, notification) : Promise.resolve({ ok: false, error: 'this Core delivers no notifications' });
}

export function createInlineAdapter(options: InlineAdapterOptions): InlineAdapter {
  const log = options.log;
  const installed = new Map<string, LoadedBuiltin>();

  function dispose(loaded: LoadedBuiltin): void {
    try {
      const maybe = loaded.dispose?.();
      if (maybe instanceof Promise) maybe.catch((err: unknown) => log.warn({ err, plugin_id: loaded.plugin_id }, 'built-in plugin dispose failed'));
    } catch (err) {
      log.warn({ err, plugin_id: loaded.plugin_id }, 'built-in plugin dispose failed');
    }
  }

  async function invoke(call: AdapterCall): Promise<PluginResult> {
    const { record, capability, request, signal } = call;
    const pluginId = record.descriptor.id;
    const loaded = installed.get(pluginId);
    if (!loaded) return failure(request, `built-in plugin ${pluginId} is not loaded`, 'adapter_error');
    if (signal.aborted) return failure(request, `call to ${pluginId}.${capability.id} was cancelled before it started`, 'cancelled');

    const ctx: BuiltinContext = {
      data_dir: loaded.data_dir,
      log: log.child({ plugin_id: pluginId, capability_id: capability.id, request_id: request.request_id }),
      request,
      config: record.descriptor.config,
      signal,
      notify: notifyFor(options, pluginId),
    };

    let onAbort: (() => void) | undefined;
    // Why race: a hung handler must not keep the adapter's promise pending forever; the dispatcher
    // has already answered with a timeout, this just releases our side.
    const aborted = new Promise<PluginResult>((resolve) => {
      onAbort = () => {
        const reason = signal.reason instanceof Error ? signal.reason.message : 'deadline reached';
        resolve(failure(request, `built-in plugin ${pluginId} did not finish ${capability.id}: ${reason}`, 'timeout'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
    const work = (async (): Promise<PluginResult> => {
      try {
        const value = await loaded.call(capability.id, request.parameters, ctx);
        return coerceResult(request, value);
      } catch (err) {
        const message = errorMessage(err);
        ctx.log.warn({ err }, 'built-in plugin handler threw');
        return failure(request, `built-in plugin ${pluginId} failed in ${capability.id}: ${message}`, 'plugin_error');
      }
    })();
    try {
      return await Promise.race([work, aborted]);
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  return {
    type: 'inline',
    invoke,
    install(loaded) {
      const previous = installed.get(loaded.plugin_id);
      installed.set(loaded.plugin_id, loaded);
      if (previous && previous !== loaded) dispose(previous);
    },
    uninstall(pluginId) {
      const previous = installed.get(pluginId);
      installed.delete(pluginId);
      if (previous) dispose(previous);
    },
    isInstalled(pluginId) {
      return installed.has(pluginId);
    },
    async health(record: PluginRecord): Promise<HealthReport> {
      const id = record.descriptor.id;
      return installed.has(id) ? { ok: true, detail: 'loaded in process' } : { ok: false, detail: `built-in plugin ${id} is not loaded` };
    },
    async stop() {
      for (const loaded of installed.values()) dispose(loaded);
      installed.clear();
    },
  };
}
