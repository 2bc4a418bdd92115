// homeclaw/plugins/notify/<plugin_id>: a plugin's message for a user, delivered by the notifier and
// answered on homeclaw/plugins/notified/<plugin_id>. Only the client that owns the plugin may send one
// (with the embedded broker the Core sees the publisher; an external broker's ACL must enforce it), a
// retained message is ignored (it would be delivered again on every reconnect), and bad input is
// answered with the reason and changes nothing.
import type { CoreBus, IncomingMessage } from '../bus/core-bus.js';
import { ownerOf } from '../bus/core-bus.js';
import type { Logger } from '../log.js';
import { isPluginId } from '../protocol/ids.js';
import { filters, parseTopic, topics } from '../protocol/topics.js';
import type { PluginNotifyAck } from '../protocol/types.js';
import { parseJsonPayload, validatePayload } from '../protocol/validate.js';
import type { RegistryApi } from '../registry/registry-api.js';
import type { Notifier } from './notifier.js';
import { formatIssues } from '../kit/format-issues.js';

export interface PluginNotifyListenerDeps {
  bus: CoreBus;
  registry: Pick<RegistryApi, 'get'>;
  notifier: Notifier;
  log: Logger;
  max_payload_bytes: number;
}

export interface PluginNotifyListener {
  readonly counters: { delivered: number; refused: number };
  stop(): Promise<void>;
}

export async function startPluginNotifyListener(deps: PluginNotifyListenerDeps): Promise<PluginNotifyListener> {
  const { bus, log } = deps;
  const counters = { delivered: 0, refused: 0 };

  async function answer(pluginId: string, ack: PluginNotifyAck): Promise<void> {
    if (ack.ok) counters.delivered++;
    else counters.refused++;
    try {
      await bus.publish(topics.notified(pluginId), JSON.stringify(ack), { qos: 1 });
    } catch (err) {
      log.warn({ err, plugin_id: pluginId }, 'could not answer a notification');
    }
  }

  async function handle(message: IncomingMessage): Promise<void> {
    const pluginId = parseTopic(message.topic)?.param;
    if (!isPluginId(pluginId)) {
      log.warn({ topic: message.topic }, 'notification on an invalid topic dropped');
      return;
    }
    if (message.retain) {
      log.warn({ plugin_id: pluginId }, 'retained notification ignored (it would repeat on every reconnect)');
      return;
    }
    const record = deps.registry.get(pluginId);
    if (!record) {
      await answer(pluginId, { ok: false, error_code: 'invalid', error: `no plugin "${pluginId}" is registered` });
      return;
    }
    if (message.publisher && ownerOf(message.publisher) !== record.owner) {
      // No answer: the publisher is not the plugin, and the plugin's ack topic is not theirs to read.
      counters.refused++;
      log.warn({ plugin_id: pluginId, client: message.publisher.clientId }, 'notification from a client that does not own the plugin refused');
      return;
    }
    const parsed = parseJsonPayload(message.payload, deps.max_payload_bytes);
    const valid = parsed.ok ? validatePayload('notify', parsed.value) : parsed;
    if (!valid.ok) {
      const notifyId = parsed.ok && typeof parsed.value['notify_id'] === 'string' ? { notify_id: parsed.value['notify_id'] } : {};
      const error = `invalid notification: ${formatIssues(valid.errors, { root: 'omit' })}`;
      log.warn({ plugin_id: pluginId, errors: valid.errors }, 'invalid notification refused');
      await answer(pluginId, { ok: false, error_code: 'invalid', error, ...notifyId });
      return;
    }
    const { user_id, text, notify_id } = valid.value;
    const outcome = await deps.notifier.notify({ user_id, text, plugin_id: pluginId, budgeted: true });
    const ids = { user_id, ...(notify_id !== undefined ? { notify_id } : {}) };
    await answer(
      pluginId,
      outcome.ok ? { ok: true, channel: outcome.channel, ...ids } : { ok: false, error_code: outcome.error_code, error: outcome.error, ...ids },
    );
  }

  const unsubscribe = await bus.subscribe(filters.notify, (message) => {
    handle(message).catch((err: unknown) => log.error({ err, topic: message.topic }, 'notification handling failed'));
  });
  return {
    counters,
    stop: () => unsubscribe(),
  };
}
