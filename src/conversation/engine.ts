// The conversation orchestrator: one user message in, one reply out, on the same request_id.
//
// Decisions (issue 5, seed PluginParameterCollection):
// - A resolver question ("ask") goes straight to the user, also on the LLM path: the resolver already
//   writes one clear question that SHOWS the values to confirm, and skipping the extra model round keeps
//   the question exact (a model paraphrase could drop a value the user must check) and saves latency.
// - The next message of the session with a pending call is interpreted first: cancel → cleared;
//   confirm / values → merged, resolver re-run, plugin invoked without another LLM round when ready;
//   unrelated → the pending call is DROPPED and the message takes the normal path: a later bare "yes"
//   must never confirm values the user last saw several replies ago (a stale address is exactly what
//   confirmation exists to prevent).
// - A plugin result with ask_user / missing_parameters becomes a pending call and a question too.
// - Plugin failures end the turn with a clear message (no post-processing); only mistakes the model can
//   fix (unknown plugin/capability, bad arguments, invalid parameters) go back to it as tool errors.
// - Sessions are serialised one message at a time per (channel, user, session); different sessions run
//   concurrently, so a slow plugin never delays another user.
import { randomUUID } from 'node:crypto';
import { diskFullMessage, guardDiskFull } from '../disk-full.js';
import type { Logger } from '../log.js';
import type { DispatcherApi, InvocationContext } from '../dispatch/dispatcher-api.js';
import type { CapabilitySpec, ChannelMessageOut, JsonObject, PluginResult } from '../protocol/types.js';
import type { PluginRecord } from '../registry/record.js';
import type { RegistryApi } from '../registry/registry-api.js';
import type { PluginSearchApi, SearchResponse } from '../retrieval/search-api.js';
import { confirmationQuestion, type ConversationAccess } from './action-confirmation.js';
import type { LlmClient, LlmMessage, LlmToolCall } from './llm-client.js';
import { describeSuggestions, extractFreeText, chooseNoLlmRoute, usageOf } from './no-llm-router.js';
import { describeFailure, postProcess } from './post-process.js';
import { looksLikeCorrectionAttempt } from './reply-interpreter.js';
import type {
  ParameterResolver,
  PendingCall,
  PendingCallStore,
  Profile,
  ProfileStore,
  ReplyInterpreter,
  SessionKey,
  SystemContext,
} from './resolver-api.js';
import { isSlashCommand, parseSlashCommand, SLASH_USAGE } from './slash-commands.js';
import { buildSystemContext, defaultTimeZone } from './system-context.js';
import { chatContextOf } from './chat-context.js';
import { PROFILE_UPDATE_TOOL, TOOL_PROFILE_UPDATE, type ProfileUpdates } from './profile-updates.js';
import { buildSystemPrompt, describePlugin } from './system-prompt.js';
import { CONVERSATION_TOOLS, runToolLoop, TOOL_FIND_PLUGINS, TOOL_ROUTE_TO_PLUGIN, type ToolExecution } from './tool-loop.js';

export interface UserMessage {
  channel: string;
  user_id: string;
  session_id?: string;
  text: string;
  request_id?: string;
  user_name?: string;
  timezone?: string;
  location?: string;
  /** The kind of front door (mqtt, http, wyoming) or what the channel message said; passed to plugins. */
  channel_type?: string;
  app_id?: string;
  /** The channel message's metadata, passed to plugins. */
  metadata?: JsonObject;
}

export interface ConversationEngine {
  /** Never rejects: every failure becomes a reply of kind 'error'. */
  handleMessage(message: UserMessage): Promise<ChannelMessageOut>;
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

type ReplyBody = Pick<ChannelMessageOut, 'text' | 'kind' | 'plugin_id' | 'capability_id'>;

interface Turn {
  key: SessionKey;
  message: UserMessage;
  text: string;
  request_id: string;
  system: SystemContext;
}

const MAX_SESSIONS_WITH_HISTORY = 1000;

export function createConversationEngine(deps: ConversationEngineDeps): ConversationEngine {
  const now = deps.now ?? (() => new Date());
  const fallbackTimezone = deps.settings.default_timezone ?? defaultTimeZone();
  const historyLimit = deps.settings.history_messages ?? 10;
  const chains = new Map<string, Promise<unknown>>();
  const histories = new Map<string, LlmMessage[]>();

  function serial<T>(id: string, task: () => Promise<T>): Promise<T> {
    const previous = chains.get(id) ?? Promise.resolve();
    const next = previous.then(task, task);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    chains.set(id, tail);
    void tail.then(() => {
      if (chains.get(id) === tail) chains.delete(id);
    });
    return next;
  }

  function historyOf(id: string): LlmMessage[] {
    return histories.get(id) ?? [];
  }

  function remember(id: string, userText: string, reply: ReplyBody): void {
    if (historyLimit <= 0) return;
    const history = [...historyOf(id), { role: 'user', content: userText } as LlmMessage, { role: 'assistant', content: reply.text } as LlmMessage];
    histories.delete(id); // re-insert: Map order doubles as least-recently-used order
    histories.set(id, history.slice(-historyLimit));
    if (histories.size > MAX_SESSIONS_WITH_HISTORY) {
      const oldest = histories.keys().next().value;
      if (oldest !== undefined) histories.delete(oldest);
    }
  }

  function profileOf(userId: string): Profile {
    try {
      return deps.profiles.get(userId);
    } catch (error) {
      deps.log.warn({ err: error, user_id: userId }, 'profile unavailable; resolving without it');
      return {};
    }
  }

  /** Only plugins the user may reach are ever offered (prompt, find_plugins, no-LLM routing). */
  async function search(query: string, userId: string): Promise<SearchResponse> {
    const access = deps.access;
    try {
      return await deps.retrieval.search(query, { k: deps.settings.top_k, ...(access ? { filter: (record: PluginRecord) => access.mayReachPlugin(userId, record) } : {}) });
    } catch (error) {
      deps.log.warn({ err: error }, 'retrieval failed; continuing without plugins');
      return { query, k: deps.settings.top_k, hits: [], mode: 'bm25' };
    }
  }

  function invocationContext(turn: Turn): InvocationContext {
    const { message } = turn;
    const chatContext = chatContextOf(historyOf(sessionId(turn.key)));
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

  function storePending(turn: Turn, call: Omit<PendingCall, 'created_at' | 'expires_at' | 'user_input'>, userInput: string): void {
    const created = now().getTime();
    guardDiskFull(`saving the question about ${call.plugin_id}.${call.capability_id}`, () =>
      deps.pending.set(turn.key, {
        ...call,
        user_input: userInput,
        created_at: created,
        expires_at: created + deps.settings.pending_ttl_sec * 1000,
      }),
    );
  }

  function clearPending(key: SessionKey): void {
    try {
      deps.pending.clear(key);
    } catch (error) {
      deps.log.warn({ err: error }, 'could not clear a pending call');
    }
  }

  /**
   * Resolves parameters and, when ready, invokes the plugin. `explicit` holds values from this turn or
   * gathered across the dialogue; `userInput` is the message that started the call; `actionConfirmed`
   * is true when the user just said "yes" to a capability that requires confirmation.
   */
  async function resolveAndInvoke(
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
    const refused = deps.dispatcher.precheck?.({ ...target, context: invocationContext(turn), confirmed: true });
    if (refused) {
      clearPending(turn.key);
      return { reply: { text: describeFailure(refused, target.plugin_id, target.capability_id), kind: 'error', ...target }, result: refused };
    }
    const mustConfirm = deps.access?.requiresConfirmation(record.descriptor.id, capability) === true && !actionConfirmed;
    const outcome = deps.resolver.resolve({ record, capability, explicit, confirmed, profile: profileOf(turn.message.user_id), system: turn.system });
    if (mustConfirm && (outcome.status === 'ready' || (outcome.missing.length === 0 && outcome.invalid.length === 0))) {
      // One question for the action and any value awaiting confirmation; "yes" confirms both. The shown
      // values are kept, so what runs is exactly what the user saw (not a profile changed meanwhile).
      const question = confirmationQuestion(record, capability, outcome.values);
      const uncertain = outcome.status === 'ask' ? outcome.uncertain.map((v) => v.name) : [];
      const kept: JsonObject = { ...explicit };
      for (const value of outcome.values) kept[value.name] = value.value;
      storePending(turn, { ...target, explicit: kept, confirmed, missing: [], uncertain, question, confirm_action: true }, userInput);
      return { reply: { text: question, kind: 'question', ...target } };
    }
    if (outcome.status === 'ask') {
      // Invalid values are dropped so the user's next answer replaces them rather than fighting them.
      const invalidNames = new Set(outcome.invalid.map((v) => v.name));
      const kept: JsonObject = {};
      for (const [name, value] of Object.entries(explicit)) if (!invalidNames.has(name)) kept[name] = value;
      storePending(
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
    clearPending(turn.key);
    const result = await deps.dispatcher.invoke({ ...target, parameters: outcome.parameters, context: invocationContext(turn), confirmed: actionConfirmed });
    if (result.ask_user || (result.missing_parameters && result.missing_parameters.length > 0)) {
      const missing = result.missing_parameters ?? [];
      const question =
        result.text?.trim() ||
        (missing.length > 0 ? `To continue I need: ${missing.join(', ')}. Please tell me.` : 'The plugin needs more information. Please tell me more.');
      // Only what the user gave is kept: profile/config values are re-resolved on the next turn.
      storePending(turn, { ...target, explicit: { ...explicit }, confirmed, missing, uncertain: [], question }, userInput);
      return { reply: { text: question, kind: 'question', ...target }, result };
    }
    if (!result.success) {
      return { reply: { text: describeFailure(result, target.plugin_id, target.capability_id), kind: 'error', ...target }, result };
    }
    const text = await postProcess({ result, capability, llm: deps.llm, userText: userInput, log: deps.log });
    return { reply: { text, kind: 'answer', ...target }, result };
  }

  function findCapability(record: PluginRecord, capabilityId: string | undefined): CapabilitySpec | undefined {
    const capabilities = record.descriptor.capabilities;
    return capabilityId === undefined ? capabilities[0] : capabilities.find((c) => c.id === capabilityId);
  }

  async function continuePending(turn: Turn): Promise<ReplyBody | undefined> {
    let pending: PendingCall | undefined;
    try {
      pending = deps.pending.get(turn.key);
    } catch (error) {
      deps.log.warn({ err: error }, 'pending-call store unavailable');
      return undefined;
    }
    if (!pending) return undefined;
    if (pending.expires_at <= now().getTime()) {
      clearPending(turn.key);
      return undefined;
    }
    const record = deps.registry.get(pending.plugin_id);
    const capability = record ? findCapability(record, pending.capability_id) : undefined;
    if (!record || !capability) {
      clearPending(turn.key);
      return undefined;
    }
    const interpretation = deps.interpreter.interpret(pending, capability, turn.text);
    switch (interpretation.kind) {
      case 'cancel':
        clearPending(turn.key);
        return { text: 'Cancelled.', kind: 'answer', plugin_id: pending.plugin_id, capability_id: pending.capability_id };
      case 'unrelated': {
        if (!looksLikeCorrectionAttempt(turn.text)) {
          clearPending(turn.key);
          deps.log.info({ plugin_id: pending.plugin_id, capability_id: pending.capability_id }, 'pending call dropped: the user moved on');
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
        return (await resolveAndInvoke(turn, record, capability, explicit, confirmed, pending.user_input, pending.confirm_action === true)).reply;
      }
      case 'values': {
        const explicit = { ...pending.explicit, ...interpretation.values };
        // A corrected value is explicit now; confirmations of the others stand.
        const corrected = new Set(Object.keys(interpretation.values));
        const confirmed = pending.confirmed.filter((name) => !corrected.has(name));
        return (await resolveAndInvoke(turn, record, capability, explicit, confirmed, pending.user_input)).reply;
      }
    }
  }

  async function handleSlash(turn: Turn): Promise<ReplyBody> {
    const command = parseSlashCommand(turn.text);
    switch (command.kind) {
      case 'invalid':
        return { text: command.message, kind: 'error' };
      case 'help':
        return {
          text: [
            'Commands:',
            `  ${SLASH_USAGE} — call a plugin directly (quote values with spaces: key="two words")`,
            '  /plugins — list the plugins and their capabilities',
            '  /help — this text',
            'Reply "cancel" to drop a pending question.',
            deps.llm ? 'Anything else goes to the language model.' : 'No language model is configured: other messages go to the best-matching plugin.',
          ].join('\n'),
          kind: 'answer',
        };
      case 'plugins': {
        const access = deps.access;
        const records = deps.registry.list().filter((record) => !access || access.mayReachPlugin(turn.message.user_id, record));
        if (records.length === 0) return { text: 'No plugins are registered.', kind: 'answer' };
        const lines = ['Plugins:'];
        for (const record of [...records].sort((a, b) => a.descriptor.id.localeCompare(b.descriptor.id))) {
          const state = record.state === 'online' ? '' : ` [${record.state}]`;
          lines.push(`- ${record.descriptor.id}${state}: ${record.descriptor.description}`);
          for (const capability of record.descriptor.capabilities) lines.push(`    ${usageOf(record.descriptor.id, capability)}`);
        }
        return { text: lines.join('\n'), kind: 'answer' };
      }
      case 'call': {
        const record = deps.registry.get(command.plugin_id);
        if (!record) return { text: `Unknown plugin "${command.plugin_id}". /plugins lists them.`, kind: 'error' };
        const capability = findCapability(record, command.capability_id);
        if (!capability) {
          const ids = record.descriptor.capabilities.map((c) => c.id).join(', ') || 'none';
          return { text: `The plugin ${record.descriptor.id} has no capability "${command.capability_id}". Its capabilities: ${ids}.`, kind: 'error', plugin_id: record.descriptor.id };
        }
        return (await resolveAndInvoke(turn, record, capability, command.parameters, [], turn.text)).reply;
      }
    }
  }

  async function handleWithoutLlm(turn: Turn): Promise<ReplyBody> {
    const response = await search(turn.text, turn.message.user_id);
    const decision = chooseNoLlmRoute(response, deps.settings.no_llm_threshold);
    if (decision.kind === 'suggest') {
      return { text: describeSuggestions(decision.hits, 'No language model is configured and no plugin clearly matches your message.'), kind: 'answer' };
    }
    const explicit = extractFreeText(decision.record, decision.capability, turn.text);
    return (await resolveAndInvoke(turn, decision.record, decision.capability, explicit, [], turn.text)).reply;
  }

  async function executeTool(turn: Turn, call: LlmToolCall, args: Record<string, unknown>): Promise<ToolExecution<ReplyBody>> {
    if (call.name === TOOL_FIND_PLUGINS) {
      const query = typeof args.query === 'string' ? args.query.trim() : '';
      if (!query) return { kind: 'to_model', content: 'Error: find_plugins needs a non-empty "query" string.' };
      const response = await search(query, turn.message.user_id);
      if (response.hits.length === 0) return { kind: 'to_model', content: `No plugin matches "${query}".` };
      const described = response.hits.map((hit) =>
        describePlugin({ record: hit.record, capability_order: hit.capabilities.map((c) => c.capability_id) }, deps.resolver),
      );
      return { kind: 'to_model', content: `Plugins matching "${query}":\n\n${described.join('\n\n')}` };
    }
    if (call.name === TOOL_PROFILE_UPDATE && deps.profileUpdates) {
      const proposed = deps.profileUpdates.propose(turn.key, args);
      if ('error' in proposed) return { kind: 'to_model', content: `Error: ${proposed.error}.` };
      clearPending(turn.key);
      return { kind: 'final', value: { text: proposed.question, kind: 'question' } };
    }
    if (call.name !== TOOL_ROUTE_TO_PLUGIN) {
      return { kind: 'to_model', content: `Error: there is no tool "${call.name}". Use ${TOOL_ROUTE_TO_PLUGIN} or ${TOOL_FIND_PLUGINS}.` };
    }
    const problems: string[] = [];
    if (typeof args.plugin_id !== 'string' || args.plugin_id === '') problems.push('"plugin_id" must be a non-empty string');
    if (args.capability_id !== undefined && args.capability_id !== null && typeof args.capability_id !== 'string') problems.push('"capability_id" must be a string');
    const rawParameters = args.parameters;
    if (rawParameters !== undefined && rawParameters !== null && (typeof rawParameters !== 'object' || Array.isArray(rawParameters))) {
      problems.push('"parameters" must be an object');
    }
    if (problems.length > 0) return { kind: 'to_model', content: `Error: invalid route_to_plugin call: ${problems.join('; ')}.` };
    const pluginId = args.plugin_id as string;
    const capabilityId = typeof args.capability_id === 'string' && args.capability_id !== '' ? args.capability_id : undefined;
    const record = deps.registry.get(pluginId);
    if (!record) {
      return { kind: 'to_model', content: `Error: there is no plugin "${pluginId}". Use one of the listed plugin ids, or call ${TOOL_FIND_PLUGINS}.` };
    }
    const capability = findCapability(record, capabilityId);
    if (!capability) {
      const ids = record.descriptor.capabilities.map((c) => c.id).join(', ') || 'none';
      return { kind: 'to_model', content: `Error: plugin "${pluginId}" has no capability "${capabilityId}". Its capabilities: ${ids}.` };
    }
    const explicit = (rawParameters ?? {}) as JsonObject;
    const { reply, result } = await resolveAndInvoke(turn, record, capability, explicit, [], turn.text);
    if (result && !result.success && (result.error_code === 'invalid_params' || result.error_code === 'not_found')) {
      return { kind: 'to_model', content: `Error from ${pluginId}/${capability.id}: ${result.error ?? result.error_code}` };
    }
    return { kind: 'final', value: reply };
  }

  async function handleWithLlm(turn: Turn, llm: LlmClient, historyId: string): Promise<ReplyBody> {
    const response = await search(turn.text, turn.message.user_id);
    const systemPrompt = buildSystemPrompt({
      plugins: response.hits.map((hit) => ({ record: hit.record, capability_order: hit.capabilities.map((c) => c.capability_id) })),
      resolver: deps.resolver,
      system: turn.system,
    });
    const messages: LlmMessage[] = [{ role: 'system', content: systemPrompt }, ...historyOf(historyId), { role: 'user', content: turn.text }];
    const outcome = await runToolLoop<ReplyBody>({
      llm,
      messages,
      tools: deps.profileUpdates ? [...CONVERSATION_TOOLS, PROFILE_UPDATE_TOOL] : CONVERSATION_TOOLS,
      maxRounds: deps.settings.max_rounds,
      execute: (call, args) => executeTool(turn, call, args),
    });
    switch (outcome.kind) {
      case 'text':
        return { text: outcome.text || 'I have nothing to add.', kind: 'answer' };
      case 'final':
        return outcome.value;
      case 'max_rounds':
        return {
          text: `I could not finish that: the language model kept calling tools without answering (stopped after ${outcome.rounds} rounds). Please rephrase, or call a plugin directly: ${SLASH_USAGE}`,
          kind: 'error',
        };
      case 'llm_error':
        deps.log.warn({ err: outcome.error, base_url: llm.baseUrl }, 'LLM call failed');
        return {
          text: `The language model at ${llm.baseUrl} is unreachable: ${outcome.error.message}; slash commands still work: ${SLASH_USAGE} (/help lists them).`,
          kind: 'error',
        };
    }
  }

  async function route(turn: Turn, historyId: string): Promise<ReplyBody> {
    if (isSlashCommand(turn.text)) {
      // A new command means the user moved on: a later bare "yes" must not confirm the older question.
      clearPending(turn.key);
      deps.profileUpdates?.drop(turn.key);
      return handleSlash(turn);
    }
    const profileAnswer = deps.profileUpdates?.answer(turn.key, turn.text);
    if (profileAnswer) return profileAnswer;
    const continued = await continuePending(turn);
    if (continued) return continued;
    if (!deps.llm) return handleWithoutLlm(turn);
    return handleWithLlm(turn, deps.llm, historyId);
  }

  async function process(turn: Turn): Promise<ReplyBody> {
    const historyId = sessionId(turn.key);
    const reply = await route(turn, historyId);
    // Every turn is remembered (questions and answers too): the model sees the dialogue so far and
    // plugins get it as chat_context.
    remember(historyId, turn.text, reply);
    return reply;
  }

  return {
    async handleMessage(message) {
      const request_id = message.request_id ?? randomUUID();
      const session_id = message.session_id ?? 'default';
      const base = { request_id, user_id: message.user_id, session_id };
      try {
        if (typeof message.text !== 'string') return { ...base, text: 'The message has no text.', kind: 'error' };
        const bytes = Buffer.byteLength(message.text, 'utf8');
        if (bytes > deps.settings.max_text_bytes) {
          return { ...base, text: `Your message is too long (${bytes} bytes; the limit is ${deps.settings.max_text_bytes} bytes). Please send something shorter.`, kind: 'error' };
        }
        const text = message.text.trim();
        if (text === '') return { ...base, text: 'Your message is empty. Type /help to see what I can do.', kind: 'error' };
        const key: SessionKey = { channel: message.channel, user_id: message.user_id, session_id };
        try {
          deps.onUserMessage?.(key);
        } catch (error) {
          deps.log.warn({ err: error }, 'user message observer failed');
        }
        const turn: Turn = {
          key,
          message,
          text,
          request_id,
          system: buildSystemContext({
            now: now(),
            ...(message.timezone ? { timezone: message.timezone } : {}),
            fallbackTimezone,
            ...(message.location ? { location: message.location } : {}),
            user_id: message.user_id,
            channel: message.channel,
          }),
        };
        const reply = await serial(sessionId(key), () => process(turn));
        return { ...base, ...reply };
      } catch (error) {
        deps.log.error({ err: error, request_id, channel: message.channel }, 'conversation failed');
        const full = diskFullMessage(error, 'saving the conversation state');
        if (full) return { ...base, text: `Sorry, I could not do that: ${full}.`, kind: 'error' };
        return { ...base, text: 'Sorry, something went wrong while handling your message. Please try again.', kind: 'error' };
      }
    },
  };
}

function sessionId(key: SessionKey): string {
  return `${key.channel}\u0000${key.user_id}\u0000${key.session_id}`;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
