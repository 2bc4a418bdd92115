// The Core's own publish/subscribe, the same whether the broker is embedded (in process, no socket)
// or external (an MQTT client connection).

export interface IncomingMessage {
  topic: string;
  payload: Buffer;
  /**
   * Identity of the publishing client: known with the embedded broker, undefined with an external one
   * (there the broker's ACL must give the same guarantee; see the README).
   */
  publisher?: PublisherIdentity;
  retain: boolean;
  /** MQTT 5 properties of the message, when the Core's session is MQTT 5 and the publisher set any. */
  properties?: MessageProperties;
}

export interface MessageProperties {
  /** Seconds left before the broker would have discarded the message (Message Expiry Interval). */
  expirySec?: number;
  /** User properties, e.g. traceparent (a name sent twice arrives as a list). */
  userProperties?: Record<string, string | string[]>;
}

export interface PublisherIdentity {
  clientId: string;
  /** The authenticated username, when the client logged in. */
  username?: string;
  /** Role from the credentials store: plugin | channel | admin; undefined for anonymous clients. */
  role?: string;
  /**
   * Plugin ids a `plugin` credential may act for (its plugin_ids; default [username]). The registry uses
   * it to refuse, with a clear error, a register for an id the credential does not own.
   */
  pluginIds?: string[];
  /** Channels a `channel` credential may act for (default [username]). */
  channels?: string[];
  /** Users a `channel` or `caller` credential may act as ("*" = anyone; default [username]). */
  users?: string[];
}

export interface PublishOptions {
  qos?: 0 | 1;
  retain?: boolean;
  /**
   * MQTT 5 only (ignored on 3.1.1 sessions and by the embedded broker): the broker discards the message
   * if it cannot deliver it within this many seconds, e.g. to a session that is offline.
   */
  expirySec?: number;
  /** MQTT 5 only, ignored otherwise: user properties sent with the message. */
  userProperties?: Record<string, string>;
  /**
   * Embedded broker: deliver only to this client's login (its client id when anonymous), e.g. an answer
   * on a topic any caller may subscribe to. Anonymous loopback clients and admins, who may read anything,
   * still receive it. An external broker cannot restrict delivery: its ACL decides.
   */
  onlyTo?: Pick<PublisherIdentity, 'clientId' | 'username'>;
}

/** What the broker said about a publish it accepted (MQTT 5 sessions only; otherwise nothing). */
export interface PublishReceipt {
  /** PUBACK reason 0x10: no client subscribes to the topic, so nobody receives the message. */
  noSubscribers?: boolean;
}

export type MessageHandler = (message: IncomingMessage) => void;

/**
 * What went through the Core's own side of the bus since it started: messages (and payload bytes) the
 * Core published, and messages delivered to at least one of its subscriptions. Plain numbers bumped on
 * every message, read when metrics are scraped.
 */
export interface BusTraffic {
  published: number;
  published_bytes: number;
  received: number;
  received_bytes: number;
}

export function emptyTraffic(): BusTraffic {
  return { published: 0, published_bytes: 0, received: 0, received_bytes: 0 };
}

export interface CoreBus {
  /** True when the Core embeds the broker and therefore knows who published each message. */
  readonly embedded: boolean;
  /** Message and byte counts of the Core's publishes and deliveries (see BusTraffic). */
  readonly traffic?: BusTraffic;
  /** Resolves when the broker accepted the message (QoS 1: its PUBACK); rejects when it refused it. */
  publish(topic: string, payload: string | Buffer, options?: PublishOptions): Promise<void>;
  /** publish() that also tells what the broker said about the message (external MQTT 5 sessions). */
  publishWithReceipt?(topic: string, payload: string | Buffer, options?: PublishOptions): Promise<PublishReceipt>;
  /** The MQTT version of the Core's session with an external broker (5 or 4 = 3.1.1); absent when embedded. */
  readonly protocolVersion?: 4 | 5;
  /** Handlers run isolated: a throwing handler is logged, never propagated to the broker. */
  subscribe(filter: string, handler: MessageHandler): Promise<() => Promise<void>>;
  /**
   * Whether any client (or the Core itself) subscribes to a topic matching this one. Known only with the
   * embedded broker; undefined means "cannot tell", so optional traffic is sent anyway. With
   * `countsFilter`, only the filters it accepts count.
   */
  hasSubscribers?(topic: string, countsFilter?: (filter: string) => boolean): boolean;
  /**
   * The retained messages under a filter, for subscribers that need the last value (a device list). The
   * embedded bus has them in the broker; an external broker sends them on subscribe, so there this is absent.
   */
  readRetained?(filter: string): Promise<IncomingMessage[]>;
  /**
   * Called whenever an MQTT client's connection closes, for any reason (embedded broker only), with
   * the client id and the filters it was subscribed to.
   */
  onClientDisconnect(listener: (clientId: string, subscriptions: readonly string[]) => void): () => void;
  /**
   * Called when the Core's own connection to an external broker drops (external broker only): nothing
   * published before can be answered on that session any more.
   */
  onConnectionLost?(listener: (reason: string) => void): () => void;
  close(): Promise<void>;
}

/** Stable owner string for a publisher, used by the registry to decide who may update an id. */
export function ownerOf(publisher: PublisherIdentity | undefined): string {
  if (!publisher) return 'mqtt:external';
  return publisher.username ? `mqtt:user:${publisher.username}` : `mqtt:client:${publisher.clientId}`;
}
