// Binds a built-in plugin's module exports to its capabilities: a RAGFlow-style class (getMetadata()
// and invoke()), functions named after the capabilities (snake_case or camelCase), methods of a default
// export object, or methods of an exported class, constructed once with the plugin's init context.
import type { JsonObject, PluginDescriptor } from '../protocol/types.js';
import type { BuiltinContext, BuiltinInitContext, RagflowToolMetadata } from './builtin-module.js';
import { LoadError } from './builtin-manifest.js';
import type { LoadedBuiltin } from './inline.js';
import { errorMessage } from '../kit/error-message.js';
import { isPlainObject } from '../kit/plain-object.js';

type AnyFunction = (...args: unknown[]) => unknown;
type Constructor = new (...args: unknown[]) => Record<string, unknown>;

function isClass(value: unknown): value is Constructor {
  return typeof value === 'function' && /^class[\s{]/.test(Function.prototype.toString.call(value));
}

function isPlainFunction(value: unknown): value is AnyFunction {
  return typeof value === 'function' && !isClass(value);
}

function exportedClasses(mod: Record<string, unknown>): Constructor[] {
  const classes: Constructor[] = [];
  if (isClass(mod.default)) classes.push(mod.default);
  for (const [key, value] of Object.entries(mod)) if (key !== 'default' && isClass(value) && !classes.includes(value)) classes.push(value);
  return classes;
}

export function findRagflowClass(mod: Record<string, unknown>): Constructor | undefined {
  return exportedClasses(mod).find((cls) => {
    const proto = cls.prototype as Record<string, unknown>;
    const hasMetadata = typeof (cls as unknown as Record<string, unknown>).getMetadata === 'function' || typeof proto.getMetadata === 'function';
    return hasMetadata && typeof proto.invoke === 'function';
  });
}

export function ragflowMetadata(cls: Constructor): Record<string, unknown> {
  const statics = cls as unknown as Record<string, unknown>;
  const getMetadata =
    typeof statics.getMetadata === 'function'
      ? (statics.getMetadata as () => unknown).bind(cls)
      : () => (new cls() as { getMetadata(): unknown }).getMetadata();
  let metadata: unknown;
  try {
    metadata = getMetadata();
  } catch (err) {
    throw new LoadError(`getMetadata() threw: ${errorMessage(err)}`);
  }
  if (!isPlainObject(metadata)) throw new LoadError('getMetadata() must return an object');
  const version = metadata.version ?? statics._version_ ?? statics.version;
  return { ...(metadata as RagflowToolMetadata), ...(typeof version === 'string' ? { version } : {}) };
}

function camelCase(id: string): string {
  return id.replace(/[_-]([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export function bindHandlers(mod: Record<string, unknown>, descriptor: PluginDescriptor, init: BuiltinInitContext): LoadedBuiltin {
  const instances: Record<string, unknown>[] = [];
  const instantiate = (cls: Constructor): Record<string, unknown> => {
    try {
      const instance = new cls(init);
      instances.push(instance);
      return instance;
    } catch (err) {
      throw new Error(`constructing ${cls.name || 'the plugin class'} failed: ${errorMessage(err)}`);
    }
  };
  const dispose = async (): Promise<void> => {
    for (const instance of instances) if (typeof instance.dispose === 'function') await (instance.dispose as () => unknown)();
  };
  const base = { plugin_id: descriptor.id, data_dir: init.data_dir, dispose };

  const ragflow = findRagflowClass(mod);
  if (ragflow) {
    const instance = instantiate(ragflow);
    return {
      ...base,
      async call(capabilityId: string, params: JsonObject, ctx: BuiltinContext) {
        const own = instance[capabilityId];
        if (typeof own === 'function' && capabilityId !== 'getMetadata') return (own as AnyFunction).call(instance, params, ctx);
        return (instance.invoke as AnyFunction).call(instance, params, ctx);
      },
    };
  }

  const defaultObject = isPlainObject(mod.default) ? mod.default : undefined;
  const handlers = new Map<string, AnyFunction>();
  const missing: string[] = [];
  let classInstance: Record<string, unknown> | undefined;
  const classes = exportedClasses(mod);
  for (const capability of descriptor.capabilities) {
    const names = [...new Set([capability.id, camelCase(capability.id)])];
    let handler: AnyFunction | undefined;
    for (const name of names) {
      const named = mod[name];
      if (isPlainFunction(named)) handler = named;
      else if (defaultObject && isPlainFunction(defaultObject[name])) handler = (defaultObject[name] as AnyFunction).bind(defaultObject);
      if (handler) break;
    }
    if (!handler) {
      const cls = classes.find((c) => names.some((n) => typeof (c.prototype as Record<string, unknown>)[n] === 'function'));
      if (cls) {
        classInstance ??= instantiate(cls);
        const name = names.find((n) => typeof classInstance![n] === 'function');
        if (name) handler = (classInstance[name] as AnyFunction).bind(classInstance);
      }
    }
    if (handler) handlers.set(capability.id, handler);
    else missing.push(capability.id);
  }
  if (missing.length > 0) {
    throw new Error(`the module exports no function or class method for capability ${missing.map((m) => `"${m}"`).join(', ')}`);
  }
  return {
    ...base,
    async call(capabilityId: string, params: JsonObject, ctx: BuiltinContext) {
      const handler = handlers.get(capabilityId);
      if (!handler) throw new Error(`unknown capability ${capabilityId}`);
      return handler(params, ctx);
    },
  };
}
