// Observer events for dashboards on homeclaw/events/<kind> (QoS 0, fire and forget): registry changes
// and finished or refused invocations. Never in the way of the work itself: a failed publish is only logged.
// The same events go to in-process subscribers (the HTTP event stream of the web dashboard), so MQTT
// observers and browsers see one feed.
import type { CoreBus } from '../bus/core-bus.js';
import type { InvocationRecord } from '../dispatch/dispatcher.js';
import type { InvocationEventBus } from '../dispatch/invocation-events.js';
import type { Logger } from '../log.js';
import { topics, type EventKind } from '../protocol/topics.js';
import type { JsonObject } from '../protocol/types.js';
import type { RegistryApi } from '../registry/registry-api.js';

/** One event as observers receive it: the topic's kind and the JSON text published on it. */
export interface FeedEvent {
  kind: EventKind;
  json: string;
}

export interface EventFeed {
  invocationFinished(record: InvocationRecord): void;
  /** A call refused before it reached the plugin (policy, confirmation, parameters, state, queue). */
  invocationRefused(record: InvocationRecord): void;
  /** Every event from now on, in order; returns the unsubscribe function. A throwing listener is dropped. */
  subscribe(listener: (event: FeedEvent) => void): () => void;
  stop(): void;
}

export interface EventFeedDeps {
  bus: CoreBus;
  registry: RegistryApi;
  log: Logger;
  /** The bus of `invocation.finished`: each finished or refused call becomes an invocation event. */
  events?: InvocationEventBus;
  /**
   * Invocation events, one per finished call: true always, false never, 'auto' only when the Core can see
   * a subscriber (embedded broker). An external broker cannot tell the Core whether anyone listens, and
   * an event per call there doubles the broker's message rate for nobody; set true to get them anyway.
   * In-process subscribers get them whatever this says: they cost nothing when there are none.
   */
  invocations?: boolean | 'auto';
}

export function startEventFeed(deps: EventFeedDeps): EventFeed {
  const invocations = deps.invocations ?? 'auto';
  const publishInvocations = invocations === true || (invocations === 'auto' && deps.bus.hasSubscribers !== undefined);
  const listeners = new Set<(event: FeedEvent) => void>();
  const publish = (kind: EventKind, event: JsonObject, brokerWanted = true): void => {
    const topic = topics.events(kind);
    // Every invocation would otherwise cost a JSON encoding and a broker publish for nobody.
    const toBroker = brokerWanted && deps.bus.hasSubscribers?.(topic) !== false;
    if (!toBroker && listeners.size === 0) return;
    const json = JSON.stringify({ ...event, ts: Date.now() });
    for (const listener of [...listeners]) {
      try {
        listener({ kind, json });
      } catch (err) {
        listeners.delete(listener);
        deps.log.warn({ err, kind }, 'event subscriber failed and was removed');
      }
    }
    if (!toBroker) return;
    deps.bus.publish(topic, json, { qos: 0 }).catch((err: unknown) => deps.log.debug({ err, kind }, 'event not published'));
  };
  const { events } = deps.registry;
  const offs = [
    events.on('plugin.registered', ({ record }) => publish('registry', { type: 'plugin.registered', plugin_id: record.descriptor.id, state: record.state })),
    events.on('plugin.updated', ({ record }) => publish('registry', { type: 'plugin.updated', plugin_id: record.descriptor.id, state: record.state })),
    events.on('plugin.removed', ({ record }) => publish('registry', { type: 'plugin.removed', plugin_id: record.descriptor.id })),
    events.on('plugin.health', ({ record, previous_state }) =>
      publish('registry', {
        type: 'plugin.health',
        plugin_id: record.descriptor.id,
        state: record.state,
        previous_state,
        ...(record.state_reason ? { reason: record.state_reason } : {}),
      }),
    ),
  ];
  const invocationFinished = (record: InvocationRecord): void => publish('invocation', { type: 'invocation.finished', ...record }, publishInvocations);
  const invocationRefused = (record: InvocationRecord): void => publish('invocation', { type: 'invocation.refused', ...record }, publishInvocations);
  if (deps.events) {
    offs.push(deps.events.on('invocation.finished', ({ record, refused }) => (refused ? invocationRefused(record) : invocationFinished(record))));
  }
  return {
    invocationFinished,
    invocationRefused,
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    stop() {
      for (const off of offs) off();
      listeners.clear();
    },
  };
}
