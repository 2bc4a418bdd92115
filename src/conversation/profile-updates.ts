// Profile corrections on the LLM path ("remember my new address is 456 Oak Ave"): the model proposes
// them with the profile_update tool, the Core shows each change as old → new and writes nothing until
// the user says yes. "cancel" (or "no") drops them; "yes, but address=..." or "address=..." corrects a
// value first; anything else means the user moved on and the proposal is dropped, so a later bare "yes"
// never saves values the user saw several replies ago. Proposals wait in SQLite per session, like
// pending plugin calls, and expire with them.
import type Database from 'better-sqlite3';
import type { CapabilitySpec, JsonObject, JsonValue } from '../protocol/types.js';
import type { LlmToolDefinition } from './llm-client.js';
import { joinWithAnd, showValue } from './questions.js';
import type { PendingCall, ProfileStore, ReplyInterpreter, SessionKey } from './resolver-api.js';
import { isPlainObject } from '../kit/plain-object.js';

export const TOOL_PROFILE_UPDATE = 'profile_update';

export const PROFILE_UPDATE_TOOL: LlmToolDefinition = {
  name: TOOL_PROFILE_UPDATE,
  description:
    'Change what HomeClaw remembers about the user (their profile: name, address, phone, ...) when the user tells you something new about themselves, e.g. "remember my new address is ...". The user is asked to confirm before anything is saved.',
  parameters: {
    type: 'object',
    properties: {
      updates: {
        type: 'object',
        description: 'Profile keys (lower case, e.g. address, phone, name) and their new values.',
        additionalProperties: { type: ['string', 'number', 'boolean'] },
      },
    },
    required: ['updates'],
    additionalProperties: false,
  },
};

const KEY = /^[a-z][a-z0-9_]{0,63}$/;
const MAX_KEYS = 20;
const MAX_VALUE_CHARS = 500;

interface Proposal {
  updates: JsonObject;
  expires_at: number;
}

/** What the engine shows: a question, or the outcome of an answer. */
export interface ProfileReply {
  text: string;
  kind: 'question' | 'answer' | 'error';
}

export interface ProfileUpdatesDeps {
  db: Database.Database;
  profiles: Pick<ProfileStore, 'get' | 'set'>;
  interpreter: ReplyInterpreter;
  ttl_sec: number;
  now?: () => number;
}

export class ProfileUpdates {
  private readonly now: () => number;
  private readonly select: Database.Statement<[string, string, string], { proposal_json: string }>;
  private readonly upsert: Database.Statement<[string, string, string, string]>;
  private readonly remove: Database.Statement<[string, string, string]>;

  constructor(private readonly deps: ProfileUpdatesDeps) {
    this.now = deps.now ?? Date.now;
    deps.db.exec(`CREATE TABLE IF NOT EXISTS pending_profile_updates (
      channel TEXT NOT NULL,
      user_id TEXT NOT NULL,
      session_id TEXT NOT NULL,
      proposal_json TEXT NOT NULL,
      PRIMARY KEY (channel, user_id, session_id)
    )`);
    this.select = deps.db.prepare('SELECT proposal_json FROM pending_profile_updates WHERE channel = ? AND user_id = ? AND session_id = ?');
    this.upsert = deps.db.prepare(
      `INSERT INTO pending_profile_updates (channel, user_id, session_id, proposal_json) VALUES (?, ?, ?, ?)
       ON CONFLICT (channel, user_id, session_id) DO UPDATE SET proposal_json = excluded.proposal_json`,
    );
    this.remove = deps.db.prepare('DELETE FROM pending_profile_updates WHERE channel = ? AND user_id = ? AND session_id = ?');
  }

  /**
   * The model's profile_update call: a confirmation question for the user, or (for arguments the model
   * got wrong) an error for the model to correct.
   */
  propose(key: SessionKey, args: Record<string, unknown>): { question: string } | { error: string } {
    const checked = checkUpdates(args['updates']);
    if ('error' in checked) return { error: `invalid profile_update call: ${checked.error}` };
    this.store(key, checked.updates);
    return { question: this.question(key.user_id, checked.updates) };
  }

  /** The user's answer to a waiting proposal; undefined when none waits or the user moved on. */
  answer(key: SessionKey, text: string): ProfileReply | undefined {
    const proposal = this.load(key);
    if (!proposal) return undefined;
    const names = Object.keys(proposal.updates);
    const interpretation = this.deps.interpreter.interpret(pendingFor(proposal, names), capabilityFor(names), text);
    switch (interpretation.kind) {
      case 'cancel':
        this.drop(key);
        return { text: 'Cancelled: your profile is unchanged.', kind: 'answer' };
      case 'unrelated':
        this.drop(key);
        return undefined;
      case 'values': {
        const updates = { ...proposal.updates, ...stringValues(interpretation.values) };
        this.store(key, updates);
        return { text: this.question(key.user_id, updates), kind: 'question' };
      }
      case 'confirm': {
        const updates = { ...proposal.updates, ...stringValues(interpretation.values) };
        this.drop(key);
        this.deps.profiles.set(key.user_id, updates);
        const saved = Object.entries(updates).map(([name, value]) => `${name} is now ${showValue(value)}`);
        return { text: `Saved: ${joinWithAnd(saved)}.`, kind: 'answer' };
      }
    }
  }

  /** Forgets a waiting proposal (a new command, a new question). */
  drop(key: SessionKey): void {
    this.remove.run(key.channel, key.user_id, key.session_id);
  }

  private question(userId: string, updates: JsonObject): string {
    const current = this.deps.profiles.get(userId);
    const changes = Object.entries(updates).map(([name, value]) => {
      const old = current[name];
      return old === undefined ? `${name} (not set yet) → ${showValue(value)}` : `${name} ${showValue(old)} → ${showValue(value)}`;
    });
    return `Update your profile: ${joinWithAnd(changes)}? Reply "yes" to save, give a corrected value (e.g. ${Object.keys(updates)[0]}=...), or "cancel".`;
  }

  private store(key: SessionKey, updates: JsonObject): void {
    const proposal: Proposal = { updates, expires_at: this.now() + this.deps.ttl_sec * 1000 };
    this.upsert.run(key.channel, key.user_id, key.session_id, JSON.stringify(proposal));
  }

  private load(key: SessionKey): Proposal | undefined {
    const row = this.select.get(key.channel, key.user_id, key.session_id);
    if (!row) return undefined;
    const proposal = JSON.parse(row.proposal_json) as Proposal;
    if (proposal.expires_at > this.now()) return proposal;
    this.drop(key);
    return undefined;
  }
}

function checkUpdates(value: unknown): { updates: JsonObject } | { error: string } {
  if (!isPlainObject(value)) return { error: '"updates" must be an object of profile keys and values' };
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return { error: '"updates" is empty' };
  if (entries.length > MAX_KEYS) return { error: `at most ${MAX_KEYS} keys at once` };
  const updates: JsonObject = {};
  for (const [name, item] of entries) {
    if (!KEY.test(name)) return { error: `"${name}" is not a profile key (lower case letters, digits and _)` };
    if (typeof item === 'string') {
      const text = item.trim();
      if (text === '' || text.length > MAX_VALUE_CHARS) return { error: `${name} must be 1-${MAX_VALUE_CHARS} characters` };
      updates[name] = text;
    } else if (typeof item === 'boolean' || (typeof item === 'number' && Number.isFinite(item))) {
      updates[name] = item;
    } else {
      return { error: `${name} must be a text, a number or true/false` };
    }
  }
  return { updates };
}

/** The proposal as a pending call, so the shared reply interpreter reads "yes", "cancel" and corrections. */
function pendingFor(proposal: Proposal, names: string[]): PendingCall {
  return {
    plugin_id: 'profile',
    capability_id: TOOL_PROFILE_UPDATE,
    explicit: proposal.updates,
    confirmed: [],
    missing: [],
    uncertain: names,
    question: '',
    user_input: '',
    created_at: 0,
    expires_at: proposal.expires_at,
  };
}

function capabilityFor(names: string[]): CapabilitySpec {
  return {
    id: TOOL_PROFILE_UPDATE,
    name: 'Profile update',
    description: 'Profile update',
    post_process: false,
    parameters: names.map((name) => ({ name, type: 'string', required: false })),
  };
}

function stringValues(values: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [name, value] of Object.entries(values)) out[name] = typeof value === 'string' ? value.trim() : (value as JsonValue);
  return out;
}
