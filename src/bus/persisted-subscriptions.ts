// Aedes stores the filters of a persistent session (clean: false) so that messages published while the
// client is away are queued for it and handed over when it returns. It stores every filter of a
// SUBSCRIBE packet as soon as one of them is granted, the refused ones too: a plugin login subscribing to
// its own invoke topic and `homeclaw/#` in one packet then received every call, parameter and result of
// the house each time it came back, and the queue for the refused filter grew without bound while it was
// away. Only filters the client may subscribe to are kept.
import type { Client } from 'aedes';

interface StoredSubscription {
  topic: string;
}

/** The part of Aedes' persistence this guards. */
export interface SubscriptionPersistence {
  addSubscriptions(client: Client, subscriptions: StoredSubscription[]): Promise<void>;
}

/** Wraps `persistence.addSubscriptions` so that it stores only the filters `mayKeep` allows for the client. */
export function keepOnlyGrantedSubscriptions(persistence: SubscriptionPersistence, mayKeep: (client: Client, filter: string) => boolean): void {
  const add = persistence.addSubscriptions.bind(persistence);
  persistence.addSubscriptions = (client, subscriptions) => {
    const granted = subscriptions.filter((subscription) => mayKeep(client, subscription.topic));
    return granted.length === subscriptions.length ? add(client, subscriptions) : add(client, granted);
  };
}
