// The parameter dialogue around one plugin call: resolve the parameters and invoke when ready, or
// store the call as pending and ask; the session's next message continues it.
//
// - A resolver question ("ask") goes straight to the user, also on the LLM path: the resolver already
//   writes one clear question that SHOWS the values to confirm, and skipping the extra model round keeps
//   the question exact (a model paraphrase could drop a value the user must check) and saves latency.
// - The next message of the session with a pending call is interpreted first: cancel → cleared;
//   confirm / values → merged, resolver re-run, plugin invoked without another LLM round when ready;
//   unrelated → the pending call is DROPPED and the message takes the normal path: a later bare "yes"
//   must never confirm values the user last saw several replies ago (a stale address is exactly what
//   confirmation exists to prevent).
// - A plugin result with ask_user / missing_parameters becomes a pending call and a question too.
import { guardDiskFull } from '../kit/disk-full.js';
import type { InvocationContext } from '../dispatch/dispatcher-api.js';
import type { CapabilitySpec, JsonObject, PluginResult } from '../protocol/types.js';
import type { PluginRecord } from '../registry/record.js';
import { confirmationQuestion } from './action-confirmation.js';
import { chatContextOf } from './chat-context.js';
import type { EngineContext } from './engine-context.js';
import type { ConversationEngineDeps, ReplyBody, Turn } from './engine-types.js';
import { describeFailure, postProcess } from './post-process.js';
import { looksLikeCorrectionAttempt } from './reply-interpreter.js';
import type { PendingCall, Profile, SessionKey } from './resolver-api.js';
import { sessionId } from './sessions.js';
import { findCapability } from '../kit/find-capability.js';

export class PendingDialogue {
  private readonly deps: ConversationEngineDeps;

  constructor(private readonly ctx: EngineContext) {
    this.deps = ctx.deps;
  }

  /**
   * Resolves parameters and, when ready, invokes the plugin. `explicit` holds values from this turn or
   * gathered across the dialogue; `userInput` is the message that started the call; `actionConfirmed`
   * is true when the user just said "yes" to a capability that requires confirmation.
   */
  async resolveAndInvoke(
    turn: Turn,
    record: PluginRecord,
    capability: CapabilitySpec,
    explicit: JsonObject,
    confirmed: string[],
    userInput: string,
    actionConfirmed = false,
  ): Promise<{ reply: ReplyBody; result?: PluginResult }> {
    const target = { plugin_id: record.descriptor.id, capability_id: capability.id };
    // A call the user's policy refuses ends here: no question, no profile read, nothing pending.
    const refused = this.deps.dispatcher.precheck?.({ ...target, context: this.invocationContext(turn), confirmed: true });
    if (refused) {
      this.clearPending(turn.key);
      return { reply: { text: describeFailure(refused, target.plugin_id, target.capability_id), kind: 'error', ...target }, result: refused };
    }
    const mustConfirm = this.deps.access?.requiresConfirmation(record.descriptor.id, capability) === true && !actionConfirmed;
    const outcome = this.deps.resolver.resolve({ record, capability, explicit, confirmed, profile: this.profileOf(turn.message.user_id), system: turn.system });
    if (mustConfirm && (outcome.status === 'ready' || (outcome.missing.length === 0 && outcome.invalid.length === 0))) {
      // One question for the action and any value awaiting confirmation; "yes" confirms both. The shown
      // values are kept, so what runs is exactly what the user saw (not a profile changed meanwhile).
      const question = confirmationQuestion(record, capability, outcome.values);
      const uncertain = outcome.status === 'ask' ? outcome.uncertain.map((v) => v.name) : [];
      const kept: JsonObject = { ...explicit };
      for (const value of outcome.values) kept[value.name] = value.value;
      this.storePending(turn, { ...target, explicit: kept, confirmed, missing: [], uncertain, question, confirm_action: true }, userInput);
      return { reply: { text: question, kind: 'question', ...target } };
    }
    if (outcome.status === 'ask') {
      // Invalid values are dropped so the user's next answer replaces them rather than fighting them.
      const invalidNames = new Set(outcome.invalid.map((v) => v.name));
      const kept: JsonObject = {};
      for (const [name, value] of Object.entries(explicit)) if (!invalidNames.has(name)) kept[name] = value;
      this.storePending(
        turn,
        {
          ...target,
          explicit: kept,
          confirmed: confirmed.filter((name) => !invalidNames.has(name)),
          missing: [...outcome.missing.map((p) => p.name), ...outcome.invalid.map((v) => v.name)],
          uncertain: outcome.uncertain.map((v) => v.name),
          question: outcome.question,
        },
        userInput,
      );
      return { reply: { text: outcome.question, kind: 'question', ...target } };
    }
    this.clearPending(turn.key);
    const result = await this.deps.dispatcher.invoke({
      ...target,
      parameters: outcome.parameters,
      context: this.invocationContext(turn),
      confirmed: actionConfirmed,
    });
    if (result.ask_user || (result.missing_parameters && result.missing_parameters.length > 0)) {
      const missing = result.missing_parameters ?? [];
      const question =
        result.text?.trim() ||
        (missing.length > 0 ? `To continue I need: ${missing.join(', ')}. Please tell me.` : 'The plugin needs more information. Please tell me more.');
      // Only what the user gave is kept: profile/config values are re-resolved on the next turn.
      this.storePending(turn, { ...target, explicit: { ...explicit }, confirmed, missing, uncertain: [], question }, userInput);
      return { reply: { text: question, kind: 'question', ...target }, result };
    }
    if (!result.success) {
      return { reply: { text: describeFailure(result, target.plugin_id, target.capability_id), kind: 'error', ...target }, result };
    }
    const text = await postProcess({ result, capability, llm: this.deps.llm, userText: userInput, log: this.deps.log });
    return { reply: { text, kind: 'answer', ...target }, result };
  }

  async continuePending(turn: Turn): Promise<ReplyBody | undefined> {
    let pending: PendingCall | undefined;
    try {
      pending = this.deps.pending.get(turn.key);
    } catch (error) {
      this.deps.log.warn({ err: error }, 'pending-call store unavailable');
      return undefined;
    }
    if (!pending) return undefined;
    if (pending.expires_at <= this.ctx.now().getTime()) {
      this.clearPending(turn.key);
      return undefined;
    }
    const record = this.deps.registry.get(pending.plugin_id);
    const capability = record ? findCapability(record.descriptor, pending.capability_id) : undefined;
    if (!record || !capability) {
      this.clearPending(turn.key);
      return undefined;
    }
    const interpretation = this.deps.interpreter.interpret(pending, capability, turn.text);
    switch (interpretation.kind) {
      case 'cancel':
        this.clearPending(turn.key);
        return { text: 'Cancelled.', kind: 'answer', plugin_id: pending.plugin_id, capability_id: pending.capability_id };
      case 'unrelated': {
        if (!looksLikeCorrectionAttempt(turn.text)) {
          this.clearPending(turn.key);
          this.deps.log.info({ plugin_id: pending.plugin_id, capability_id: pending.capability_id }, 'pending call dropped: the user moved on');
          return undefined;
        }
        // Ambiguous correction ("actually use 456 Oak Ave" while both address and phone await
        // confirmation): ask which value it is, keeping the call pending, rather than dropping the
        // correction and leaving the stale values one "yes" away from being used.
        const names = unique([...pending.uncertain, ...pending.missing]);
        const example = names.map((name) => `${name}="..."`).join(', ');
        return {
          text: `I could not tell which value to change. Please name it (e.g. ${example}), or reply "cancel". ${pending.question}`,
          kind: 'question',
          plugin_id: pending.plugin_id,
          capability_id: pending.capability_id,
        };
      }
      case 'confirm': {
        const explicit = { ...pending.explicit, ...interpretation.values };
        const confirmed = unique([...pending.confirmed, ...pending.uncertain]);
        return (await this.resolveAndInvoke(turn, record, capability, explicit, confirmed, pending.user_input, pending.confirm_action === true)).reply;
      }
      case 'values': {
        const explicit = { ...pending.explicit, ...interpretation.values };
        // A corrected value is explicit now; confirmations of the others stand.
        const corrected = new Set(Object.keys(interpretation.values));
        const confirmed = pending.confirmed.filter((name) => !corrected.has(name));
        return (await this.resolveAndInvoke(turn, record, capability, explicit, confirmed, pending.user_input)).reply;
      }
    }
  }

  clearPending(key: SessionKey): void {
    try {
      this.deps.pending.clear(key);
    } catch (error) {
      this.deps.log.warn({ err: error }, 'could not clear a pending call');
    }
  }

  private storePending(turn: Turn, call: Omit<PendingCall, 'created_at' | 'expires_at' | 'user_input'>, userInput: string): void {
    const created = this.ctx.now().getTime();
    guardDiskFull(`saving the question about ${call.plugin_id}.${call.capability_id}`, () =>
      this.deps.pending.set(turn.key, {
        ...call,
        user_input: userInput,
        created_at: created,
        expires_at: created + this.deps.settings.pending_ttl_sec * 1000,
      }),
    );
  }

  private invocationContext(turn: Turn): InvocationContext {
    const { message } = turn;
    const chatContext = chatContextOf(this.ctx.history.of(sessionId(turn.key)));
    return {
      user_id: message.user_id,
      ...(message.user_name ? { user_name: message.user_name } : {}),
      channel_name: turn.key.channel,
      ...(message.channel_type ? { channel_type: message.channel_type } : {}),
      ...(message.app_id ? { app_id: message.app_id } : {}),
      session_id: turn.key.session_id,
      user_input: turn.text,
      ...(chatContext ? { chat_context: chatContext } : {}),
      ...(message.metadata ? { metadata: message.metadata } : {}),
    };
  }

  private profileOf(userId: string): Profile {
    try {
      return this.deps.profiles.get(userId);
    } catch (error) {
      this.deps.log.warn({ err: error, user_id: userId }, 'profile unavailable; resolving without it');
      return {};
    }
  }
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
