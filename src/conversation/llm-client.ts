// The one place that speaks to an OpenAI-compatible chat endpoint. The rest of the conversation room
// uses these small message types, so it never depends on the openai package's shapes.
import { MAX_CALL_TIMEOUT_SEC } from '../protocol/limits.js';
import OpenAI from 'openai';
import type { LlmConfig } from '../config/types.js';

export interface LlmToolCall {
  id: string;
  name: string;
  /** Raw JSON text as the model produced it: it may be malformed, the tool loop checks it. */
  arguments: string;
}

export type LlmMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: LlmToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface LlmToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export interface LlmReply {
  content: string | null;
  tool_calls: LlmToolCall[];
  /** Tokens the endpoint says the request used, when it says (OpenAI's `usage`). */
  usage?: LlmUsage;
}

export interface LlmUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** Why a request failed, in a few fixed words (metrics label them; the message says the rest). */
export type LlmFailure = 'timeout' | 'connection' | 'http_4xx' | 'http_5xx' | 'invalid_response';

/** What complete() rejects with: the message for people, `failure` for counting. */
export class LlmError extends Error {
  constructor(
    message: string,
    readonly failure: LlmFailure,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'LlmError';
  }
}

export interface LlmClient {
  /** The endpoint, for user-facing error messages (never includes the key). */
  readonly baseUrl: string;
  readonly model: string;
  /** Rejects with an LlmError whose message explains the failure (unreachable, HTTP status, timeout). */
  complete(messages: LlmMessage[], tools?: LlmToolDefinition[]): Promise<LlmReply>;
}

/** null when no base_url is configured: the Core then runs without an LLM (slash commands, direct routing). */
export function createLlmClient(config: LlmConfig): LlmClient | null {
  if (!config.base_url) return null;
  const baseUrl = config.base_url;
  const model = config.model ?? 'default';
  const client = new OpenAI({
    baseURL: baseUrl,
    // Local servers (llama.cpp, Ollama) accept any key; the package refuses an empty one.
    apiKey: config.api_key ?? 'not-needed',
    // Capped like every call timeout: a longer timer would overflow and fire at once.
    timeout: Math.min(Math.max(1, config.timeout_sec), MAX_CALL_TIMEOUT_SEC) * 1000,
    // One retry at most: a user is waiting, and "unreachable" must come back quickly.
    maxRetries: 0,
  });
  return {
    baseUrl,
    model,
    async complete(messages, tools) {
      try {
        const response = await client.chat.completions.create({
          model,
          temperature: config.temperature,
          messages: messages.map(toOpenAiMessage),
          ...(tools && tools.length > 0
            ? {
                tools: tools.map((tool) => ({
                  type: 'function' as const,
                  function: { name: tool.name, description: tool.description, parameters: tool.parameters },
                })),
              }
            : {}),
        });
        const message = response.choices?.[0]?.message;
        if (!message) throw new Error('the response had no choices');
        const toolCalls: LlmToolCall[] = [];
        for (const call of message.tool_calls ?? []) {
          if (call.type === 'function') {
            toolCalls.push({ id: call.id, name: call.function.name, arguments: call.function.arguments ?? '' });
          }
        }
        const reply: LlmReply = { content: message.content ?? null, tool_calls: toolCalls };
        const usage = response.usage;
        if (usage && Number.isFinite(usage.prompt_tokens) && Number.isFinite(usage.completion_tokens)) {
          reply.usage = { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens };
        }
        return reply;
      } catch (error) {
        throw new LlmError(describeLlmError(error), failureOf(error), { cause: error });
      }
    },
  };
}

function toOpenAiMessage(message: LlmMessage): OpenAI.Chat.Completions.ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'tool':
      return { role: 'tool', tool_call_id: message.tool_call_id, content: message.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        ...(message.tool_calls && message.tool_calls.length > 0
          ? {
              tool_calls: message.tool_calls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : {}),
      };
  }
}

function failureOf(error: unknown): LlmFailure {
  if (error instanceof OpenAI.APIConnectionTimeoutError) return 'timeout';
  if (error instanceof OpenAI.APIConnectionError) return 'connection';
  const status = error instanceof OpenAI.APIError ? (error.status ?? 0) : 0;
  if (status >= 500) return 'http_5xx';
  if (status >= 400) return 'http_4xx';
  return 'invalid_response';
}

function describeLlmError(error: unknown): string {
  if (error instanceof OpenAI.APIConnectionTimeoutError) return 'the request timed out';
  if (error instanceof OpenAI.APIConnectionError) {
    const cause = error.cause instanceof Error ? error.cause.message : undefined;
    return cause ? `connection failed (${cause})` : 'connection failed';
  }
  if (error instanceof OpenAI.APIError) return `HTTP ${error.status ?? '?'}: ${firstLine(error.message)}`;
  if (error instanceof Error) return firstLine(error.message);
  return String(error);
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
