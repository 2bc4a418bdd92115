// A scripted OpenAI-compatible server: POST /v1/chat/completions answers with programmed responses (text
// or tool calls), in order or from a function of the request, and records every request body. It can
// be told to fail (HTTP 500) or hang, so tests exercise the real `openai` client against it.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ScriptedToolCall {
  name: string;
  /** An object is JSON-encoded; a string is sent as is (so tests can send malformed JSON). */
  arguments: string | Record<string, unknown>;
  id?: string;
}

/** Token counts reported in the response's `usage` (default: 1 prompt, 1 completion). */
export interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export type ScriptedResponse =
  | { text: string; usage?: ScriptedUsage }
  | { tool_calls: ScriptedToolCall[]; text?: string; usage?: ScriptedUsage }
  | { status: number; body?: string }
  | { hang: true };

export interface ChatRequestBody {
  model?: string;
  messages: { role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  [key: string]: unknown;
}

export type ResponseFunction = (request: ChatRequestBody, index: number) => ScriptedResponse;

export interface ScriptedLlm {
  /** Base URL to give the openai client: http://127.0.0.1:<port>/v1 */
  readonly url: string;
  /** Every chat request body received, in order. */
  readonly requests: ChatRequestBody[];
  /** Queues responses (used when no function is set). */
  push(...responses: ScriptedResponse[]): void;
  /** Answers every request from a function instead of the queue. */
  respondWith(fn: ResponseFunction | null): void;
  /** Responses still queued. */
  remaining(): number;
  close(): Promise<void>;
}

export interface ScriptedLlmOptions {
  responses?: ScriptedResponse[];
  respond?: ResponseFunction;
  /** Answer when the queue is empty (default: a text saying so, so a test sees it). */
  whenExhausted?: ScriptedResponse;
}

export async function startScriptedLlm(options: ScriptedLlmOptions = {}): Promise<ScriptedLlm> {
  const queue: ScriptedResponse[] = [...(options.responses ?? [])];
  let respond: ResponseFunction | null = options.respond ?? null;
  const requests: ChatRequestBody[] = [];
  const sockets = new Set<Socket>();
  let callCount = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      if (req.method === 'GET' && path === '/v1/models') {
        sendJson(res, 200, { object: 'list', data: [{ id: 'scripted', object: 'model', created: 0, owned_by: 'test' }] });
        return;
      }
      if (req.method !== 'POST' || path !== '/v1/chat/completions') {
        sendJson(res, 404, { error: { message: `no route ${req.method} ${path}` } });
        return;
      }
      let body: ChatRequestBody;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequestBody;
      } catch {
        sendJson(res, 400, { error: { message: 'invalid JSON' } });
        return;
      }
      requests.push(body);
      const index = callCount++;
      const response: ScriptedResponse = respond ? respond(body, index) : (queue.shift() ?? options.whenExhausted ?? { text: 'SCRIPT EXHAUSTED' });
      if ('hang' in response) return; // keep the socket open until the client gives up or close()
      if ('status' in response) {
        sendJson(res, response.status, { error: { message: response.body ?? `scripted failure ${response.status}`, type: 'server_error' } });
        return;
      }
      const toolCalls =
        'tool_calls' in response
          ? response.tool_calls.map((call, i) => ({
              id: call.id ?? `call_${index}_${i}`,
              type: 'function',
              function: {
                name: call.name,
                arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
              },
            }))
          : undefined;
      sendJson(res, 200, {
        id: `chatcmpl-${index}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model ?? 'scripted',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'text' in response ? (response.text ?? null) : null,
              ...(toolCalls ? { tool_calls: toolCalls } : {}),
              refusal: null,
            },
            finish_reason: toolCalls ? 'tool_calls' : 'stop',
            logprobs: null,
          },
        ],
        usage: usageOf(response.usage ?? { prompt_tokens: 1, completion_tokens: 1 }),
      });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    push: (...responses) => {
      queue.push(...responses);
    },
    respondWith: (fn) => {
      respond = fn;
    },
    remaining: () => queue.length,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function usageOf(usage: ScriptedUsage): ScriptedUsage & { total_tokens: number } {
  return { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The system prompt a request carried (first system message), for assertions. */
export function systemPromptOf(request: ChatRequestBody): string {
  const system = request.messages.find((m) => m.role === 'system');
  return typeof system?.content === 'string' ? system.content : '';
}
