// Observer events for dashboards on homeclaw/events/<kind> (QoS 0, fire and forget): registry changes
// and finished invocations. Never in the way of the work itself: a failed publish is only logged.
import type { CoreBus } from '../bus/core-bus.js';
import type { InvocationRecord } from '../dispatch/dispatcher.js';
import type { Logger } from '../log.js';
import { topics, type EventKind } from '../protocol/topics.js';
import type { JsonObject } from '../protocol/types.js';
import type { RegistryApi } from '../registry/registry-api.js';

export interface EventFeed {
  invocationFinished(record: InvocationRecord): void;
  stop(): void;
}

export interface EventFeedDeps {
  bus: CoreBus;
  registry: RegistryApi;
  log: Logger;
  /**
   * Invocation events, one per finished call: true always, false never, 'auto' only when the Core can see
   * a subscriber (embedded broker). An external broker cannot tell the Core whether anyone listens, and
   * an event per call there doubles the broker's message rate for nobody; set true to get them anyway.
   */
  invocations?: boolean | 'auto';
}

export function startEventFeed(deps: EventFeedDeps): EventFeed {
  const invocations = deps.invocations ?? 'auto';
  const publishInvocations = invocations === true || (invocations === 'auto' && deps.bus.hasSubscribers !== undefined);
  const publish = (kind: EventKind, event: JsonObject): void => {
    const topic = topics.events(kind);
    // Every invocation would otherwise cost a JSON encoding and a broker publish for nobody.
    if (deps.bus.hasSubscribers?.(topic) === false) return;
    deps.bus
      .publish(topic, JSON.stringify({ ...event, ts: Date.now() }), { qos: 0 })
      .catch((err: unknown) => deps.log.debug({ err, kind }, 'event not published'));
  };
  const { events } = deps.registry;
  const offs = [
    events.on('plugin.registered', ({ record }) =>
      publish('registry', { type: 'plugin.registered', plugin_id: record.descriptor.id, state: record.state }),
    ),
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
  return {
    invocationFinished(record) {
      if (publishInvocations) publish('invocation', { type: 'invocation.finished', ...record });
    },
    stop() {
      for (const off of offs) off();
    },
  };
}
