// notify(): a plugin's message for a user outside any request. Published on
// homeclaw/plugins/notify/<id> with a fresh notify_id; the Core's answer on notified/<id> settles it.
import { randomUUID } from 'node:crypto';
import type { NotifyErrorCode, PluginNotifyAck, PluginNotifyMessage } from '../protocol/types.js';

export interface NotifyOptions {
  /** How long to wait for the Core's answer (default 10 s). */
  timeout_ms?: number;
}

/** Rejection of notify(): the Core refused the message (code from its answer) or did not answer. */
export class PluginNotifyError extends Error {
  constructor(
    message: string,
    readonly code: NotifyErrorCode | 'timeout' | 'not_connected',
  ) {
    super(message);
    this.name = 'PluginNotifyError';
  }
}

interface Waiter {
  resolve: (channel: string) => void;
  reject: (error: PluginNotifyError) => void;
  timer: NodeJS.Timeout;
}

export class Notifications {
  private readonly waiting = new Map<string, Waiter>();

  constructor(private readonly publish: (message: PluginNotifyMessage) => Promise<void>) {}

  /** Resolves with the channel the Core delivered on. */
  async send(userId: string, text: string, options: NotifyOptions = {}): Promise<{ channel: string }> {
    const notifyId = randomUUID();
    const timeoutMs = options.timeout_ms ?? 10_000;
    const answered = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(notifyId);
        reject(new PluginNotifyError(`the Core did not answer the notification within ${timeoutMs} ms`, 'timeout'));
      }, timeoutMs);
      this.waiting.set(notifyId, { resolve, reject, timer });
    });
    try {
      await this.publish({ user_id: userId, text, notify_id: notifyId });
    } catch (error) {
      this.settle(notifyId, { ok: false, error: `could not publish: ${(error as Error).message}`, error_code: 'failed' });
    }
    return { channel: await answered };
  }

  onAck(ack: PluginNotifyAck): void {
    if (ack.notify_id !== undefined) this.settle(ack.notify_id, ack);
  }

  /** Fails every notification still waiting (the plugin is closing). */
  cancelAll(reason: string): void {
    for (const id of [...this.waiting.keys()]) this.settle(id, { ok: false, error: reason });
  }

  private settle(notifyId: string, ack: PluginNotifyAck): void {
    const waiter = this.waiting.get(notifyId);
    if (!waiter) return;
    this.waiting.delete(notifyId);
    clearTimeout(waiter.timer);
    if (ack.ok && ack.channel) waiter.resolve(ack.channel);
    else waiter.reject(new PluginNotifyError(ack.error ?? 'the Core refused the notification', ack.error_code ?? 'failed'));
  }
}
