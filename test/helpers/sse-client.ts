// Reads GET /api/events as a test client: fetch's stream through the dashboard's own SSE parser, with
// "wait for an event" helpers.
import { SseParser, type SseMessage } from '../../web/src/sse-parser.js';

export interface SseClient {
  status: number;
  messages: SseMessage[];
  waitFor(predicate: (m: SseMessage) => boolean, timeoutMs?: number): Promise<SseMessage>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string>): Promise<SseClient> {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  const messages: SseMessage[] = [];
  const waiters = new Set<{ predicate: (m: SseMessage) => boolean; resolve: (m: SseMessage) => void }>();
  const parser = new SseParser((message) => {
    messages.push(message);
    for (const w of [...waiters]) {
      if (w.predicate(message)) {
        waiters.delete(w);
        w.resolve(message);
      }
    }
  });
  const ended = (async () => {
    if (!response.ok || !response.body) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body) parser.push(decoder.decode(chunk as Uint8Array, { stream: true }));
    } catch {
      // aborted by close()
    }
  })();
  return {
    status: response.status,
    messages,
    ended,
    waitFor(predicate, timeoutMs = 10_000) {
      const found = messages.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = {
          predicate,
          resolve: (m: SseMessage) => {
            clearTimeout(timer);
            resolve(m);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(messages)}`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    close: () => controller.abort(),
  };
}
