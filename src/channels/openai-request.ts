// Reading a chat completion request as OpenAI clients send it (the whole conversation every turn) into
// what the conversation engine needs: the text of the last user message, the turns before it (for the
// session), the optional `user` field, and whether to stream. Sampling options (temperature, max_tokens,
// top_p...) mean nothing to HomeClaw and are ignored; tools and tool messages are ignored with a note,
// since HomeClaw routes to its own plugins; other unknown fields are ignored as OpenAI's own API ignores
// fields it does not know.
import { OpenAiRequestError } from './openai-errors.js';
import type { ChatCompletionRequest } from './openai-request-schema.js';
import { isPlainObject } from '../kit/plain-object.js';

/** One earlier turn of the conversation, normalised so resent history hashes the same. */
export interface Turn {
  role: 'user' | 'assistant';
  text: string;
}

export interface ChatRequest {
  model: string;
  /** The last user message's text: what the engine answers. */
  text: string;
  /** The user and assistant turns before the last user message. */
  earlier: Turn[];
  /** The request's `user` field, if any (its meaning depends on openai_endpoint.user_field). */
  user?: string;
  stream: boolean;
  /** stream_options.include_usage: a last chunk with usage and no choices. */
  include_usage: boolean;
  /** What the request carried that HomeClaw ignored and says so (tools, tool messages, images...). */
  ignored: string[];
}

const TOOL_FIELDS = ['tools', 'tool_choice', 'functions', 'function_call', 'parallel_tool_calls'] as const;

/** The text of a message's content (a string or an array of parts); non-text parts are reported. */
function textOf(content: ChatCompletionRequest['messages'][number]['content'], ignored: Set<string>): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  const texts: string[] = [];
  for (const part of content) {
    if (part.type === 'text') texts.push(part.text ?? '');
    // The note goes into a response header: only a plain part type is named.
    else ignored.add(/^[a-z_]{1,32}$/.test(part.type) ? `${part.type} content` : 'non-text content');
  }
  return texts.join('\n');
}

/** Whitespace differences (a client trimming or re-wrapping an answer) do not start a new conversation. */
export function normaliseText(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** A request its schema accepted, read into what the engine needs; refuses one with no user text to answer. */
export function parseChatRequest(body: ChatCompletionRequest): ChatRequest {
  const fields = body as ChatCompletionRequest & Record<string, unknown>;
  const ignored = new Set<string>();
  for (const field of TOOL_FIELDS) if (fields[field] !== undefined && fields[field] !== null) ignored.add('tools');
  const turns = body.messages.map((message) => {
    if (message.role === 'tool' || message.role === 'function') ignored.add('tool messages');
    const toolCalls = (message as Record<string, unknown>)['tool_calls'];
    if (message.role === 'assistant' && toolCalls !== undefined && toolCalls !== null) ignored.add('tool calls');
    return { role: message.role, text: textOf(message.content, ignored) };
  });

  let last = -1;
  for (let i = turns.length - 1; i >= 0; i -= 1) {
    if (turns[i]?.role === 'user') {
      last = i;
      break;
    }
  }
  if (last < 0) throw new OpenAiRequestError(400, "Invalid 'messages': there is no user message to answer.", 'messages', 'invalid_value');
  const text = turns[last]?.text ?? '';
  if (text.trim() === '')
    throw new OpenAiRequestError(400, `Invalid 'messages[${last}].content': the last user message has no text.`, `messages[${last}].content`, 'invalid_value');

  const earlier: Turn[] = [];
  for (const turn of turns.slice(0, last)) {
    if (turn.role !== 'user' && turn.role !== 'assistant') continue; // system prompts change every turn (they carry the time)
    const normalised = normaliseText(turn.text);
    if (normalised !== '') earlier.push({ role: turn.role, text: normalised });
  }
  const streamOptions = isPlainObject(body.stream_options) ? body.stream_options : {};
  return {
    model: body.model,
    text,
    earlier,
    ...(typeof body.user === 'string' ? { user: body.user } : {}),
    stream: body.stream === true,
    include_usage: body.stream === true && streamOptions.include_usage === true,
    ignored: [...ignored],
  };
}
