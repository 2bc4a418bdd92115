// The parameter resolver's contract (what it reads, what it decides), shared by the dialogue logic and
// the conversation engine that orchestrates it.
import type { CapabilitySpec, JsonObject, JsonValue, ParameterSpec } from '../protocol/types.js';
import type { PluginRecord } from '../registry/record.js';

/** Where a resolved value came from, in resolution order. */
export type ValueSource = 'explicit' | 'confirmed' | 'system' | 'profile' | 'config' | 'default';

export interface SystemContext {
  /** ISO 8601 with offset. */
  datetime: string;
  date: string;
  time: string;
  timezone: string;
  location?: string;
  user_id: string;
  channel: string;
}

export type Profile = Record<string, JsonValue>;

export interface ResolveInput {
  record: PluginRecord;
  capability: CapabilitySpec;
  /** Values given this turn (by the LLM, a slash command, or the user's answer to a question). */
  explicit: JsonObject;
  /** Names of parameters whose current values the user has confirmed. */
  confirmed?: string[];
  profile: Profile;
  system: SystemContext;
}

export interface ResolvedValue {
  name: string;
  value: JsonValue;
  source: ValueSource;
}

export interface InvalidValue {
  name: string;
  value: JsonValue;
  reason: string;
}

export type ResolveOutcome =
  | { status: 'ready'; parameters: JsonObject; values: ResolvedValue[] }
  | {
      status: 'ask';
      /** Required parameters with no value. */
      missing: ParameterSpec[];
      /** Values present but failing coercion/validation (asked again, with the reason). */
      invalid: InvalidValue[];
      /** Values from profile/config that need the user's confirmation (confirm_if_uncertain). */
      uncertain: ResolvedValue[];
      /** Everything resolved so far (including uncertain ones). */
      values: ResolvedValue[];
      /** One user-facing question covering all missing, invalid and uncertain values. */
      question: string;
    };

export interface ParameterResolver {
  resolve(input: ResolveInput): ResolveOutcome;
  /** Parameters the LLM should see: those filled from trusted config (use_default_directly_for) are left out. */
  llmVisibleParameters(record: PluginRecord, capability: CapabilitySpec): ParameterSpec[];
}

/** A plugin call waiting for the user's answer, kept per session (channel, user, session). */
export interface PendingCall {
  plugin_id: string;
  capability_id: string;
  /** Values gathered so far, explicit or confirmed. */
  explicit: JsonObject;
  confirmed: string[];
  missing: string[];
  uncertain: string[];
  question: string;
  user_input: string;
  created_at: number;
  expires_at: number;
  /** The question asks to confirm the action itself (a capability that requires confirmation): "yes" runs it. */
  confirm_action?: boolean;
}

export interface SessionKey {
  channel: string;
  user_id: string;
  session_id: string;
}

export interface PendingCallStore {
  get(key: SessionKey): PendingCall | undefined;
  set(key: SessionKey, call: PendingCall): void;
  clear(key: SessionKey): void;
}

/** How the user's next message relates to a pending call. */
export type ReplyInterpretation = { kind: 'cancel' } | { kind: 'confirm'; values: JsonObject } | { kind: 'values'; values: JsonObject } | { kind: 'unrelated' };

export interface ReplyInterpreter {
  interpret(pending: PendingCall, capability: CapabilitySpec, text: string): ReplyInterpretation;
}

export interface ProfileStore {
  get(userId: string): Profile;
  set(userId: string, values: Profile): void;
  /** Removes keys; returns the profile after the change. */
  unset(userId: string, keys: string[]): Profile;
}
