// A subscription whose handler takes a while (an engine turn, a plugin call). Each message's work is
// tracked; a failure is handed to onError instead of escaping into the bus; stop() unsubscribes, ignores
// whatever still arrives, and waits for the work already running, so stopping never cuts a reply short.
import type { CoreBus, IncomingMessage } from './core-bus.js';

export interface TrackedSubscription {
  /** Unsubscribes, then waits for the handlers still running. */
  stop(): Promise<void>;
}

export async function subscribeTracked(
  bus: Pick<CoreBus, 'subscribe'>,
  filter: string,
  handle: (message: IncomingMessage) => Promise<void>,
  onError: (error: unknown, message: IncomingMessage) => void,
): Promise<TrackedSubscription> {
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  const unsubscribe = await bus.subscribe(filter, (message) => {
    if (stopped) return;
    const task = handle(message).catch((error: unknown) => onError(error, message));
    inFlight.add(task);
    void task.finally(() => inFlight.delete(task));
  });
  return {
    async stop() {
      stopped = true;
      await unsubscribe();
      await Promise.allSettled([...inFlight]);
    },
  };
}
