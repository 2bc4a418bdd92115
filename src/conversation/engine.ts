// The conversation orchestrator: one user message in, one reply out, on the same request_id. It routes
// each turn (slash command, pending profile change, pending plugin call, the model or, without one, the
// best-matching plugin) and composes the rooms that do the work: the session queue and history, the
// pending dialogue, the slash commands and the tool executor.
// - Plugin failures end the turn with a clear message (no post-processing); only mistakes the model can
//   fix go back to it as tool errors.
// - Sessions are serialised one message at a time per (channel, user, session); different sessions run
//   concurrently, so a slow plugin never delays another user.
import { randomUUID } from 'node:crypto';
import { diskFullMessage } from '../kit/disk-full.js';
import { searchReachable, type EngineContext } from './engine-context.js';
import type { ConversationEngine, ConversationEngineDeps, ReplyBody, Turn } from './engine-types.js';
import type { LlmClient, LlmMessage } from './llm-client.js';
import { describeSuggestions, extractFreeText, chooseNoLlmRoute } from './no-llm-router.js';
import { PendingDialogue } from './pending-dialogue.js';
import { PROFILE_UPDATE_TOOL } from './profile-updates.js';
import type { SessionKey } from './resolver-api.js';
import { SessionHistory, SessionQueue, sessionId } from './sessions.js';
import { isSlashCommand, SLASH_USAGE } from './slash-commands.js';
import { answerSlashCommand } from './slash-handler.js';
import { buildSystemContext, defaultTimeZone } from './system-context.js';
import { buildSystemPrompt } from './system-prompt.js';
import { executeTool } from './tool-executor.js';
import { CONVERSATION_TOOLS, runToolLoop } from './tool-loop.js';
import { LogWindow } from '../kit/log-window.js';
import { TokenBuckets } from '../kit/token-buckets.js';

export type { ConversationEngine, ConversationEngineDeps, ConversationSettings, UserMessage } from './engine-types.js';

export function createConversationEngine(deps: ConversationEngineDeps): ConversationEngine {
  const now = deps.now ?? (() => new Date());
  const fallbackTimezone = deps.settings.default_timezone ?? defaultTimeZone();
  const queue = new SessionQueue();
  const history = new SessionHistory(deps.settings.history_messages ?? 10);
  const ctx: EngineContext = { deps, now, history };
  const dialogue = new PendingDialogue(ctx);
  const perMinute = deps.settings.max_messages_per_minute;
  const budget = perMinute === undefined ? undefined : new TokenBuckets(perMinute, () => now().getTime());
  const refusals = new LogWindow();
  const retryAfterSec = (user_id: string): number => Math.ceil((budget?.waitMs(user_id) ?? 0) / 1000);

  async function handleWithoutLlm(turn: Turn): Promise<ReplyBody> {
    const response = await searchReachable(ctx, turn.text, turn.message.user_id);
    const decision = chooseNoLlmRoute(response, deps.settings.no_llm_threshold);
    if (decision.kind === 'suggest') {
      return { text: describeSuggestions(decision.hits, 'No language model is configured and no plugin clearly matches your message.'), kind: 'answer' };
    }
    const explicit = extractFreeText(decision.record, decision.capability, turn.text);
    return (await dialogue.resolveAndInvoke(turn, decision.record, decision.capability, explicit, [], turn.text)).reply;
  }

  async function handleWithLlm(turn: Turn, llm: LlmClient, historyId: string): Promise<ReplyBody> {
    const response = await searchReachable(ctx, turn.text, turn.message.user_id);
    const systemPrompt = buildSystemPrompt({
      plugins: response.hits.map((hit) => ({ record: hit.record, capability_order: hit.capabilities.map((c) => c.capability_id) })),
      resolver: deps.resolver,
      system: turn.system,
    });
    const messages: LlmMessage[] = [{ role: 'system', content: systemPrompt }, ...history.of(historyId), { role: 'user', content: turn.text }];
    const outcome = await runToolLoop<ReplyBody>({
      llm,
      messages,
      tools: deps.profileUpdates ? [...CONVERSATION_TOOLS, PROFILE_UPDATE_TOOL] : CONVERSATION_TOOLS,
      maxRounds: deps.settings.max_rounds,
      execute: (call, args) => executeTool(ctx, dialogue, turn, call, args),
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
      dialogue.clearPending(turn.key);
      deps.profileUpdates?.drop(turn.key);
      return answerSlashCommand(ctx, dialogue, turn);
    }
    const profileAnswer = deps.profileUpdates?.answer(turn.key, turn.text);
    if (profileAnswer) return profileAnswer;
    const continued = await dialogue.continuePending(turn);
    if (continued) return continued;
    if (!deps.llm) return handleWithoutLlm(turn);
    return handleWithLlm(turn, deps.llm, historyId);
  }

  async function process(turn: Turn): Promise<ReplyBody> {
    const historyId = sessionId(turn.key);
    const reply = await route(turn, historyId);
    // Every turn is remembered (questions and answers too): the model sees the dialogue so far and
    // plugins get it as chat_context.
    history.remember(historyId, turn.text, reply);
    return reply;
  }

  return {
    retryAfterSec,
    async handleMessage(message) {
      const request_id = message.request_id ?? randomUUID();
      const session_id = message.session_id ?? 'default';
      const base = { request_id, user_id: message.user_id, session_id };
      try {
        if (typeof message.text !== 'string') return { ...base, text: 'The message has no text.', kind: 'error' };
        const bytes = Buffer.byteLength(message.text, 'utf8');
        if (bytes > deps.settings.max_text_bytes) {
          return {
            ...base,
            text: `Your message is too long (${bytes} bytes; the limit is ${deps.settings.max_text_bytes} bytes). Please send something shorter.`,
            kind: 'error',
          };
        }
        const text = message.text.trim();
        if (text === '') return { ...base, text: 'Your message is empty. Type /help to see what I can do.', kind: 'error' };
        if (budget && !budget.take(message.user_id)) {
          const retry_after_sec = Math.max(1, retryAfterSec(message.user_id));
          refusals.warn(
            deps.log,
            message.user_id,
            { user_id: message.user_id, channel: message.channel, retry_after_sec },
            'message refused: too many from this user',
          );
          return {
            ...base,
            text: `You are sending messages faster than ${budget.perMinute} a minute; please wait ${retry_after_sec} s and try again.`,
            kind: 'error',
            error_code: 'rate_limited',
            retry_after_sec,
          };
        }
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
        const reply = await queue.run(sessionId(key), () => process(turn));
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
