// Messages for a user that nobody asked for in this exchange: a plugin's notify, a reminder, a scheduled
// task's result. They go to the channel the user last spoke on (a channel nobody listens to is skipped
// when the broker can tell), else to notifications.default_channel, as a channel reply of kind
// "notification" with a fresh request_id. The sending plugin must be one the user may reach, and within
// its budget of messages to that user.
import { randomUUID } from 'node:crypto';
import type { AccessPolicy } from '../access/policy.js';
import type { CoreBus } from '../bus/core-bus.js';
import type { Logger } from '../log.js';
import { isChannelId } from '../protocol/ids.js';
import { topics } from '../protocol/topics.js';
import type { ChannelMessageOut, NotifyErrorCode } from '../protocol/types.js';
import type { RegistryApi } from '../registry/registry-api.js';
import type { LastChannel } from './last-channel-store.js';
import type { NotificationBudget } from './notification-budget.js';
import { LogWindow } from '../kit/log-window.js';
import type { SpeakerDecision } from '../access/channel-bindings.js';

export interface Notification {
  user_id: string;
  text: string;
  /** The plugin the message comes from (its policy is checked); absent for the Core's own messages. */
  plugin_id?: string;
  /**
   * Sent on the plugin's own initiative (its notify), so counted against its budget for this user; a
   * task's result runs on a schedule the user configured and is not.
   */
  budgeted?: boolean;
  /** Deliver here instead of the user's last channel (a task configured with a channel). */
  channel?: string;
  /** Deliver here when the user has no last channel and no default channel is configured. */
  fallback_channel?: string;
}

export type NotifyOutcome = { ok: true; channel: string; request_id: string } | { ok: false; error_code: NotifyErrorCode; error: string };

export interface Notifier {
  /** Never rejects. */
  notify(notification: Notification): Promise<NotifyOutcome>;
}

/**
 * Whether a plugin may send a user a message. The rule: a plugin the user may not reach (per-user policy)
 * may not reach them either.
 */
export type PluginNotifyPolicy = (userId: string, pluginId: string) => boolean;

/**
 * The per-user policy (policy.users.<id>.allow|deny) applied to notifications: a plugin may message a
 * user only if that user may reach at least one of its capabilities; an unknown plugin may not.
 */
export function pluginNotifyPolicy(access: Pick<AccessPolicy, 'mayReachPlugin'>, registry: Pick<RegistryApi, 'get'>): PluginNotifyPolicy {
  return (userId, pluginId) => {
    const record = registry.get(pluginId);
    return record !== undefined && access.mayReachPlugin(userId, record);
  };
}

export interface NotifierDeps {
  bus: Pick<CoreBus, 'publish' | 'hasSubscribers'>;
  lastChannels: { get(userId: string): LastChannel | undefined };
  /** notifications.default_channel: used when the user has no (listened-to) last channel. */
  default_channel: string | null;
  /** Without one, every plugin may notify every user (a Core without per-user policy). */
  mayNotify?: PluginNotifyPolicy;
  /** How many messages a plugin may send one user; without one, no limit (the Core's own messages have none). */
  budget?: NotificationBudget;
  /** Whether a channel may carry a message for a user (a channel bound to other users may not); without one, any may. */
  mayCarry?: (channel: string, userId: string) => SpeakerDecision;
  log: Logger;
}

export function createNotifier(deps: NotifierDeps): Notifier {
  const mayNotify = deps.mayNotify ?? ((): boolean => true);
  const refusals = new LogWindow();
  const listened = (channel: string): boolean => deps.bus.hasSubscribers?.(topics.channelOut(channel)) !== false;

  function target(notification: Notification): { channel: string; session_id?: string } | undefined {
    if (notification.channel) return { channel: notification.channel };
    const last = deps.lastChannels.get(notification.user_id);
    if (last && listened(last.channel)) return { channel: last.channel, session_id: last.session_id };
    if (deps.default_channel) return { channel: deps.default_channel };
    // A last channel nobody listens to now may have a client again later: better than dropping.
    if (last) return { channel: last.channel, session_id: last.session_id };
    if (notification.fallback_channel) return { channel: notification.fallback_channel };
    return undefined;
  }

  return {
    async notify(notification) {
      const log = deps.log.child({ user_id: notification.user_id, plugin_id: notification.plugin_id });
      if (notification.text.trim() === '') return { ok: false, error_code: 'invalid', error: 'the message is empty' };
      if (notification.plugin_id && !mayNotify(notification.user_id, notification.plugin_id)) {
        log.warn('notification refused: the user may not reach this plugin');
        return { ok: false, error_code: 'forbidden', error: `user "${notification.user_id}" may not reach plugin "${notification.plugin_id}"` };
      }
      if (notification.budgeted && notification.plugin_id && deps.budget && !deps.budget.take(notification.plugin_id, notification.user_id)) {
        refusals.warn(log, `${notification.plugin_id}\u0000${notification.user_id}`, {}, 'notification refused: too many from this plugin');
        return {
          ok: false,
          error_code: 'rate_limited',
          error: `plugin "${notification.plugin_id}" sent user "${notification.user_id}" more than ${deps.budget.perMinute} messages in the last minute (notifications.max_per_minute); this one was not delivered`,
        };
      }
      const where = target(notification);
      if (!where) {
        log.warn('notification not delivered: the user has never spoken on a channel and no default channel is configured');
        return {
          ok: false,
          error_code: 'no_channel',
          error: `user "${notification.user_id}" has no last channel and notifications.default_channel is not set`,
        };
      }
      if (!isChannelId(where.channel)) return { ok: false, error_code: 'invalid', error: `invalid channel name ${JSON.stringify(where.channel)}` };
      const carried = deps.mayCarry?.(where.channel, notification.user_id) ?? { allowed: true };
      if (!carried.allowed) {
        refusals.warn(
          log,
          `${where.channel}\u0000${notification.user_id}`,
          { channel: where.channel },
          'notification refused: the channel belongs to other users',
        );
        return { ok: false, error_code: 'forbidden', error: carried.reason };
      }
      const request_id = randomUUID();
      const message: ChannelMessageOut = {
        request_id,
        user_id: notification.user_id,
        ...(where.session_id !== undefined ? { session_id: where.session_id } : {}),
        text: notification.text,
        kind: 'notification',
        ...(notification.plugin_id ? { plugin_id: notification.plugin_id } : {}),
      };
      try {
        await deps.bus.publish(topics.channelOut(where.channel), JSON.stringify(message), { qos: 1 });
      } catch (err) {
        log.warn({ err, channel: where.channel }, 'notification could not be published');
        return { ok: false, error_code: 'failed', error: `could not publish on channel ${where.channel}: ${(err as Error).message}` };
      }
      log.info({ channel: where.channel, request_id }, 'notification delivered');
      return { ok: true, channel: where.channel, request_id };
    },
  };
}
