// The Core's event feed (GET /api/events, server-sent events) read with fetch, so the token goes in the
// Authorization header and never in a URL. Pages subscribe to events; each `ready` (the first connection
// and every reconnection) tells them to load their state again, since events missed while disconnected
// are not replayed. Reconnects with a growing delay (2 s up to 30 s) until stopped.
import { authHeaders } from './api.js';
import { SseParser } from './sse-parser.js';
import type { FeedEvent } from './types.js';

export type FeedState = 'connecting' | 'live' | 'down';

export interface LiveFeed {
  /** Every registry and invocation event; returns the unsubscribe function. */
  onEvent(listener: (kind: string, event: FeedEvent) => void): () => void;
  /** Called on every (re)connection, after which no event is missed. */
  onReady(listener: () => void): () => void;
  onState(listener: (state: FeedState) => void): () => void;
  state(): FeedState;
  stop(): void;
}

const MAX_DELAY_MS = 30_000;

export function openLiveFeed(options: { onUnauthorized: () => void }): LiveFeed {
  const events = new Set<(kind: string, event: FeedEvent) => void>();
  const readies = new Set<() => void>();
  const states = new Set<(state: FeedState) => void>();
  let current: FeedState = 'connecting';
  let stopped = false;
  let controller: AbortController | undefined;
  let retryMs = 2000;
  let delayMs = retryMs;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const setState = (state: FeedState): void => {
    if (state === current) return;
    current = state;
    for (const listener of [...states]) listener(state);
  };

  const dispatch = (event: string, data: string): void => {
    if (event === 'ready') {
      delayMs = retryMs;
      setState('live');
      for (const listener of [...readies]) listener();
      return;
    }
    let parsed: FeedEvent;
    try {
      parsed = JSON.parse(data) as FeedEvent;
    } catch {
      return;
    }
    for (const listener of [...events]) listener(event, parsed);
  };

  const connect = async (): Promise<void> => {
    controller = new AbortController();
    setState('connecting');
    try {
      const response = await fetch('api/events', { headers: authHeaders({ accept: 'text/event-stream' }), signal: controller.signal, cache: 'no-store' });
      if (response.status === 401) {
        options.onUnauthorized();
        return;
      }
      if (!response.ok || !response.body) throw new Error(`event stream answered ${response.status}`);
      const parser = new SseParser(
        (message) => dispatch(message.event, message.data),
        (ms) => (retryMs = ms),
      );
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.push(value);
      }
    } catch {
      // An aborted or broken stream: reconnect below unless stopped.
    }
    if (stopped) return;
    setState('down');
    timer = setTimeout(() => void connect(), delayMs);
    delayMs = Math.min(delayMs * 2, MAX_DELAY_MS);
  };

  void connect();
  const add = <T>(set: Set<T>, listener: T): (() => void) => {
    set.add(listener);
    return () => void set.delete(listener);
  };
  return {
    onEvent: (listener) => add(events, listener),
    onReady: (listener) => add(readies, listener),
    onState: (listener) => add(states, listener),
    state: () => current,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      controller?.abort();
      events.clear();
      readies.clear();
      states.clear();
    },
  };
}
