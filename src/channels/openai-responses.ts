// The answer in OpenAI's shapes: a chat completion, or (stream: true) server-sent events of
// chat.completion.chunk objects ending with `data: [DONE]`. The shapes are typed by the openai package's
// own declarations, so a field OpenAI renames breaks the build rather than the clients.
//
// The conversation engine answers in one piece (a plugin result, a question, an error text), so a stream
// is: the role at once (the client sees the request was taken), comment lines while the answer is being
// worked out (proxies and clients with idle timeouts keep the connection), then the text, the finish
// reason, the usage when asked for, and [DONE]. Usage is always zero: HomeClaw does not count tokens
// (an answer may come from a plugin without any model).
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { Model } from 'openai/resources/models';

/** Every chunk of one stream shares the id and created time, as OpenAI's do. */
export interface CompletionIdentity {
  id: string;
  created: number;
  model: string;
}

const ZERO_USAGE: CompletionUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
/** Comment lines this far apart keep an idle connection open while a slow plugin works. */
export const KEEP_ALIVE_MS = 15_000;

export function newCompletionIdentity(model: string, now: number = Date.now()): CompletionIdentity {
  return { id: `chatcmpl-${randomBytes(18).toString('base64url')}`, created: Math.floor(now / 1000), model };
}

export function chatCompletion(identity: CompletionIdentity, text: string): ChatCompletion {
  return {
    ...identity,
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: ZERO_USAGE,
  };
}

export function modelObject(id: string, created: number): Model {
  return { id, object: 'model', created, owned_by: 'homeclaw' };
}

function chunk(identity: CompletionIdentity, choices: ChatCompletionChunk['choices'], usage?: CompletionUsage): ChatCompletionChunk {
  return { ...identity, object: 'chat.completion.chunk', choices, ...(usage ? { usage } : {}) };
}

/** Writes one stream; every write is a no-op once the client has gone. */
export class CompletionStream {
  private readonly keepAlive: NodeJS.Timeout;

  constructor(
    private readonly out: ServerResponse,
    private readonly identity: CompletionIdentity,
    headers: Record<string, string>,
  ) {
    out.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...headers,
    });
    out.on('close', () => clearInterval(this.keepAlive));
    this.event(chunk(identity, [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]));
    this.keepAlive = setInterval(() => this.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    this.keepAlive.unref();
  }

  /** True when the client closed the connection before the answer. */
  get clientGone(): boolean {
    return this.out.destroyed || this.out.writableEnded;
  }

  finish(text: string, includeUsage: boolean): void {
    this.event(chunk(this.identity, [{ index: 0, delta: { content: text }, logprobs: null, finish_reason: null }]));
    this.event(chunk(this.identity, [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]));
    if (includeUsage) this.event(chunk(this.identity, [], ZERO_USAGE));
    this.write('data: [DONE]\n\n');
    clearInterval(this.keepAlive);
    if (!this.clientGone) this.out.end();
  }

  /** Ends the stream with an error event in OpenAI's shape (what its clients raise as APIError). */
  fail(message: string): void {
    this.write(`data: ${JSON.stringify({ error: { message, type: 'server_error', param: null, code: null } })}\n\n`);
    clearInterval(this.keepAlive);
    if (!this.clientGone) this.out.end();
  }

  private event(payload: ChatCompletionChunk): void {
    this.write(`data: ${JSON.stringify(payload)}\n\n`);
  }

  private write(text: string): void {
    if (!this.clientGone) this.out.write(text);
  }
}
