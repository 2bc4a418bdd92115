// A small typed event bus. Each listener runs isolated: one that throws is logged and the others,
// and the emitter, carry on. The event map is a type parameter: the registry emits the plugin events
// below; the Core's bus carries these and the invocation events too (dispatch/invocation-events.ts).
import type { Logger } from '../log.js';
import type { PluginRecord, PluginState } from './record.js';

export interface RegistryEvents {
  'plugin.registered': { record: PluginRecord };
  'plugin.updated': { record: PluginRecord; previous: PluginRecord };
  'plugin.removed': { record: PluginRecord };
  'plugin.health': { record: PluginRecord; previous_state: PluginState };
}

export type RegistryEventName = keyof RegistryEvents;
type Listener<Events, E extends keyof Events> = (payload: Events[E]) => void | Promise<void>;
/** Stored without its event's type, so a bus of more events can stand in for a bus of fewer. */
type AnyListener = (payload: never) => void | Promise<void>;

export class TypedEventBus<Events extends object = RegistryEvents> {
  private readonly listeners = new Map<PropertyKey, Set<AnyListener>>();

  constructor(private readonly log: Logger) {}

  on<E extends keyof Events>(event: E, listener: Listener<Events, E>): () => void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener as AnyListener);
    return () => set.delete(listener as AnyListener);
  }

  emit<E extends keyof Events>(event: E, payload: Events[E]): void {
    const set = this.listeners.get(event) as Set<Listener<Events, E>> | undefined;
    if (!set) return;
    for (const listener of set) {
      try {
        const maybe = listener(payload);
        if (maybe instanceof Promise) {
          maybe.catch((err: unknown) => this.log.error({ err, event }, 'event listener failed'));
        }
      } catch (err) {
        this.log.error({ err, event }, 'event listener failed');
      }
    }
  }
}
