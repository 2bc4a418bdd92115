// Reading a chat completion request as OpenAI clients send it (the whole conversation every turn) into
// what the conversation engine needs: the text of the last user message, the turns before it (for the
// session), the optional `user` field, and whether to stream. Sampling options (temperature, max_tokens,
// top_p...) mean nothing to HomeClaw and are ignored; tools and tool messages are ignored with a note,
// since HomeClaw routes to its own plugins; other unknown fields are ignored as OpenAI's own API ignores
// fields it does not know.
import { OpenAiRequestError } from './openai-errors.js';
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

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);
const TOOL_FIELDS = ['tools', 'tool_choice', 'functions', 'function_call', 'parallel_tool_calls'] as const;

/** The text of a message's content (a string or an array of parts); non-text parts are reported. */
function textOf(content: unknown, param: string, ignored: Set<string>): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw new OpenAiRequestError(400, `${param} must be a string or an array of content parts.`, param, 'invalid_type');
  const texts: string[] = [];
  content.forEach((part, index) => {
    if (!isPlainObject(part) || typeof part.type !== 'string') {
      throw new OpenAiRequestError(400, `${param}[${index}] must be a content part object with a "type".`, `${param}[${index}]`, 'invalid_type');
    }
    if (part.type === 'text') {
      if (typeof part.text !== 'string')
        throw new OpenAiRequestError(400, `${param}[${index}].text must be a string.`, `${param}[${index}].text`, 'invalid_type');
      texts.push(part.text);
    } else {
      // The note goes into a response header: only a plain part type is named.
      ignored.add(/^[a-z_]{1,32}$/.test(part.type) ? `${part.type} content` : 'non-text content');
    }
  });
  return texts.join('\n');
}

/** Whitespace differences (a client trimming or re-wrapping an answer) do not start a new conversation. */
export function normaliseText(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

export function parseChatRequest(body: unknown): ChatRequest {
  if (!isPlainObject(body)) throw new OpenAiRequestError(400, 'The request body must be a JSON object.', null, 'invalid_type');
  if (body.model === undefined) throw new OpenAiRequestError(400, "Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
  if (typeof body.model !== 'string') throw new OpenAiRequestError(400, "Invalid type for 'model': expected a string.", 'model', 'invalid_type');
  if (body.messages === undefined) throw new OpenAiRequestError(400, "Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw new OpenAiRequestError(400, "Invalid 'messages': expected a non-empty array of messages.", 'messages', 'invalid_value');
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    throw new OpenAiRequestError(400, "Invalid type for 'stream': expected a boolean.", 'stream', 'invalid_type');
  }
  if (body.n !== undefined && body.n !== null && body.n !== 1) {
    throw new OpenAiRequestError(400, "Invalid 'n': HomeClaw gives exactly one answer (n must be 1).", 'n', 'invalid_value');
  }
  if (body.user !== undefined && body.user !== null && (typeof body.user !== 'string' || body.user.length === 0 || body.user.length > 256)) {
    throw new OpenAiRequestError(400, "Invalid 'user': expected a string of 1 to 256 characters.", 'user', 'invalid_value');
  }

  const ignored = new Set<string>();
  for (const field of TOOL_FIELDS) if (body[field] !== undefined && body[field] !== null) ignored.add('tools');
  const turns: { role: string; text: string }[] = [];
  body.messages.forEach((message, index) => {
    const param = `messages[${index}]`;
    if (!isPlainObject(message)) throw new OpenAiRequestError(400, `${param} must be an object with a role.`, param, 'invalid_type');
    if (typeof message.role !== 'string' || !ROLES.has(message.role)) {
      throw new OpenAiRequestError(400, `Invalid '${param}.role': expected one of ${[...ROLES].join(', ')}.`, `${param}.role`, 'invalid_value');
    }
    if (message.role === 'tool' || message.role === 'function') ignored.add('tool messages');
    if (message.role === 'assistant' && message.tool_calls !== undefined && message.tool_calls !== null) ignored.add('tool calls');
    turns.push({ role: message.role, text: textOf(message.content, `${param}.content`, ignored) });
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
