// The shapes the conversation engine works with: the message in, the engine's dependencies and
// settings, the reply body of one turn, and the turn itself.
import type { DispatcherApi } from '../dispatch/dispatcher-api.js';
import type { Logger } from '../log.js';
import type { ChannelMessageIn, ChannelMessageOut } from '../protocol/types.js';
import type { RegistryApi } from '../registry/registry-api.js';
import type { PluginSearchApi } from '../retrieval/search-api.js';
import type { ConversationAccess } from './action-confirmation.js';
import type { LlmClient } from './llm-client.js';
import type { ProfileUpdates } from './profile-updates.js';
import type { ParameterResolver, PendingCallStore, ProfileStore, ReplyInterpreter, SessionKey, SystemContext } from './resolver-api.js';

/** A message from any front door: the channel message's fields (the wire form) and the channel it came through. */
export interface UserMessage extends ChannelMessageIn {
  channel: string;
}

export interface ConversationEngine {
  /** Never rejects: every failure becomes a reply of kind 'error'. */
  handleMessage(message: UserMessage): Promise<ChannelMessageOut>;
  /**
   * Seconds until the user's next message would be taken (0: now), without spending anything: lets a
   * front door refuse in its own protocol (HTTP 429) before it starts answering.
   */
  retryAfterSec?(user_id: string): number;
}

export interface ConversationSettings {
  /** Plugins shown to the model (retrieval top-k). */
  top_k: number;
  /** LLM rounds per message (config llm.max_rounds). */
  max_rounds: number;
  pending_ttl_sec: number;
  /** Minimum top retrieval score for routing a natural message without an LLM. */
  no_llm_threshold: number;
  max_text_bytes: number;
  /** Used when a message carries no (valid) timezone; default: the machine's. */
  default_timezone?: string;
  /** Previous messages of the session replayed to the model (default 10). */
  history_messages?: number;
  /** Messages one user may send per minute over every channel together; undefined: no limit. */
  max_messages_per_minute?: number;
}

export interface ConversationEngineDeps {
  /** null: no LLM configured (slash commands and direct routing only). */
  llm: LlmClient | null;
  retrieval: PluginSearchApi;
  dispatcher: DispatcherApi;
  registry: Pick<RegistryApi, 'get' | 'list'>;
  resolver: ParameterResolver;
  pending: PendingCallStore;
  interpreter: ReplyInterpreter;
  profiles: Pick<ProfileStore, 'get'>;
  log: Logger;
  settings: ConversationSettings;
  now?: () => Date;
  /** Told of every user message the engine takes (e.g. to remember the user's last channel). */
  onUserMessage?: (key: SessionKey) => void;
  /** Policy (what the user may reach) and which capabilities need the user's confirmation. */
  access?: ConversationAccess;
  /** Offers the model the profile_update tool; every change waits for the user's "yes". */
  profileUpdates?: ProfileUpdates;
}

export type ReplyBody = Pick<ChannelMessageOut, 'text' | 'kind' | 'plugin_id' | 'capability_id'>;

export interface Turn {
  key: SessionKey;
  message: UserMessage;
  text: string;
  request_id: string;
  system: SystemContext;
}
