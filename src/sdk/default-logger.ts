// Without a logger from the author, warnings and errors still reach stderr: a refused registration or a
// crashing handler must not be invisible. Debug and info stay quiet.
import type { SdkLogger } from './types.js';

export function stderrLogger(pluginId: string): SdkLogger {
  const write = (level: string, obj: object, msg?: string): void => {
    process.stderr.write(`${JSON.stringify({ level, plugin_id: pluginId, msg, ...obj }, errorsAsMessages)}\n`);
  };
  return {
    debug: () => {},
    info: () => {},
    warn: (obj, msg) => write('warn', obj, msg),
    error: (obj, msg) => write('error', obj, msg),
  };
}

export function silentSdkLogger(): SdkLogger {
  const noop = (): void => {};
  return { debug: noop, info: noop, warn: noop, error: noop };
}

function errorsAsMessages(_key: string, value: unknown): unknown {
  return value instanceof Error ? value.message : value;
}
