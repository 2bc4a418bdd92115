// The plugin the dispatcher-level benchmarks call: registered in a registry, answered at once by an inline
// adapter, so a row measures the dispatcher and its hooks and nothing else.
import type Database from 'better-sqlite3';
import type { PluginAdapter } from '../../src/adapters/adapter.js';
import type { InvokeOptions } from '../../src/dispatch/dispatcher-api.js';
import type { Logger } from '../../src/log.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { Registry } from '../../src/registry/registry.js';

export interface InstantEcho {
  registry: Registry;
  adapter: PluginAdapter;
  /** One call of its capability, as a user on a channel. */
  call: InvokeOptions;
  /** The dispatcher settings every row uses. */
  config: { default_timeout_sec: number; default_max_concurrency: number; default_queue_limit: number };
}

export function instantEcho(db: Database.Database, log: Logger): InstantEcho {
  const registry = new Registry({ db, events: new TypedEventBus(log), log });
  registry.register({
    descriptor: {
      id: 'echo',
      name: 'Echo',
      description: 'Answers at once.',
      source: 'external',
      type: 'inline',
      config: { max_concurrency: 64 },
      capabilities: [{ id: 'run', name: 'Run', description: 'Run.', parameters: [], post_process: false }],
    },
    owner: 'api',
  });
  const adapter: PluginAdapter = {
    type: 'inline',
    invoke: async ({ request }) => ({ request_id: request.request_id, plugin_id: request.plugin_id, success: true, text: 'ok' }),
  };
  return {
    registry,
    adapter,
    call: { plugin_id: 'echo', capability_id: 'run', parameters: {}, context: { user_id: 'alice', channel_name: 'home' } },
    config: { default_timeout_sec: 30, default_max_concurrency: 64, default_queue_limit: 1000 },
  };
}
