// The Core's typed events about invocations. Every invocation ends with exactly one
// `invocation.finished`, whether it ran or was refused before reaching a plugin; the audit log, the
// metrics, the event feed and Home Assistant discovery subscribe to it instead of being called one by one.
import type { RegistryEvents, TypedEventBus } from '../registry/events.js';
import type { InvocationAudit } from './dispatcher-api.js';
import type { InvocationRecord } from './dispatcher.js';

export interface InvocationFinished {
  /** What observers may see (no parameters, no user). */
  record: InvocationRecord;
  /** The audit entry: who called what through which channel, and the outcome ("ok" or the error code). */
  audit: InvocationAudit;
  /** True when the call never reached a plugin (policy, confirmation, parameters, state, queue). */
  refused: boolean;
}

export interface InvocationEvents {
  'invocation.finished': InvocationFinished;
}

/** Every event of the Core's one typed bus: the registry's plugin events and the invocation events. */
export type CoreEvents = RegistryEvents & InvocationEvents;

/** A bus that carries at least the invocation events; the dispatcher emits on it. */
export type InvocationEventBus = TypedEventBus<InvocationEvents>;
