// A small typed event bus. Each listener runs isolated: one that throws is logged and the others,
// and the emitter, carry on (plan §2).
import type { Logger } from '../log.js';
import type { PluginRecord, PluginState } from './record.js';

export interface RegistryEvents {
  'plugin.registered': { record: PluginRecord };
  'plugin.updated': { record: PluginRecord; previous: PluginRecord };
  'plugin.removed': { record: PluginRecord };
  'plugin.health': { record: PluginRecord; previous_state: PluginState };
}

export type RegistryEventName = keyof RegistryEvents;
type Listener<E extends RegistryEventName> = (payload: RegistryEvents[E]) => void | Promise<void>;

export class TypedEventBus {
  private readonly listeners = new Map<RegistryEventName, Set<Listener<RegistryEventName>>>();

  constructor(private readonly log: Logger) {}

  on<E extends RegistryEventName>(event: E, listener: Listener<E>): () => void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener as Listener<RegistryEventName>);
    return () => set.delete(listener as Listener<RegistryEventName>);
  }

  emit<E extends RegistryEventName>(event: E, payload: RegistryEvents[E]): void {
    for (const listener of this.listeners.get(event) ?? []) {
      try {
        const maybe = listener(payload);
        if (maybe instanceof Promise) {
          maybe.catch((err: unknown) => this.log.error({ err, event }, 'registry event listener failed'));
        }
      } catch (err) {
        this.log.error({ err, event }, 'registry event listener failed');
      }
    }
  }
}
