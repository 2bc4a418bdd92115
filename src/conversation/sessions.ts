// Per-session state of the conversation. Messages are serialised one at a time per (channel, user,
// session); different sessions run concurrently, so a slow plugin never delays another user. The last
// messages of each session are kept to replay to the model and to pass to plugins as chat_context.
import type { ReplyBody } from './engine-types.js';
import type { LlmMessage } from './llm-client.js';
import type { SessionKey } from './resolver-api.js';

const MAX_SESSIONS_WITH_HISTORY = 1000;

export function sessionId(key: SessionKey): string {
  return `${key.channel}\u0000${key.user_id}\u0000${key.session_id}`;
}

/** Runs tasks one after another per session id; a failed task does not stop the next. */
export class SessionQueue {
  private readonly chains = new Map<string, Promise<unknown>>();

  run<T>(id: string, task: () => Promise<T>): Promise<T> {
    const previous = this.chains.get(id) ?? Promise.resolve();
    const next = previous.then(task, task);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    this.chains.set(id, tail);
    void tail.then(() => {
      if (this.chains.get(id) === tail) this.chains.delete(id);
    });
    return next;
  }
}

/** The recent dialogue of each session, at most `limit` messages, for the most recently active sessions. */
export class SessionHistory {
  private readonly histories = new Map<string, LlmMessage[]>();

  constructor(private readonly limit: number) {}

  of(id: string): LlmMessage[] {
    return this.histories.get(id) ?? [];
  }

  remember(id: string, userText: string, reply: ReplyBody): void {
    if (this.limit <= 0) return;
    const history = [...this.of(id), { role: 'user', content: userText } as LlmMessage, { role: 'assistant', content: reply.text } as LlmMessage];
    this.histories.delete(id); // re-insert: Map order doubles as least-recently-used order
    this.histories.set(id, history.slice(-this.limit));
    if (this.histories.size > MAX_SESSIONS_WITH_HISTORY) {
      const oldest = this.histories.keys().next().value;
      if (oldest !== undefined) this.histories.delete(oldest);
    }
  }
}
