// The OpenAI-compatible front door: POST /v1/chat/completions (model "homeclaw") and GET /v1/models, so
// any OpenAI-compatible client (Open WebUI, n8n, Home Assistant's OpenAI-compatible conversation
// integrations) talks to the household assistant. The last user message goes through the conversation
// engine on the channel "openai" as the user of the token: a user token speaks only as its user; the
// admin token as the request's `user` field or openai_endpoint.default_user. The answer is a chat
// completion, or server-sent events with stream: true. Errors, 401 included, use OpenAI's error shape.
//
// Which session a request continues (so "yes" confirms the call waiting in it), first match wins:
// the x-homeclaw-session header; with user_field "conversation", the client's conversation id in `user`;
// otherwise the conversation's own history (see openai-sessions.ts). The session used is returned in the
// x-homeclaw-session response header. Tools the client offers are ignored (HomeClaw routes to its own
// plugins): the x-homeclaw-note response header and the log say so.
import { createHash, randomUUID } from 'node:crypto';
import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../access/principal.js';
import { isUserId } from '../access/user-id.js';
import { principalOf, USER_ROUTE } from '../api/principal-auth.js';
import { routeValidatorCompiler } from '../api/route-validation.js';
import type { UnauthorizedResponder } from '../api/server.js';
import type { OpenAiEndpointConfig } from '../config/types.js';
import type { ConversationEngine } from '../conversation/engine.js';
import type { Logger } from '../log.js';
import type { ChannelMessageOut } from '../protocol/types.js';
import { LogWindow } from '../kit/log-window.js';
import { fromFrameworkError, fromValidationErrors, OpenAiRequestError, rateLimitedError, sendOpenAiError, unauthorizedError } from './openai-errors.js';
import { ChatCompletionRequest } from './openai-request-schema.js';
import { parseChatRequest, type ChatRequest } from './openai-request.js';
import { chatCompletion, CompletionStream, modelObject, newCompletionIdentity } from './openai-responses.js';
import type { OpenAiSessions } from './openai-sessions.js';

/** The channel name the engine, plugins, policy and the audit log see for this front door. */
export const OPENAI_CHANNEL = 'openai';
/** The one model this endpoint serves. */
export const OPENAI_MODEL = 'homeclaw';
export const SESSION_HEADER = 'x-homeclaw-session';
const SESSION_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

export interface OpenAiEndpointDeps {
  engine: Pick<ConversationEngine, 'handleMessage' | 'retryAfterSec'>;
  sessions: OpenAiSessions;
  settings: OpenAiEndpointConfig;
  log: Logger;
}

export function isOpenAiPath(path: string): boolean {
  return path === '/v1/chat/completions' || path === '/v1/models' || path.startsWith('/v1/models/');
}

/** 401 in OpenAI's shape for this front door's paths. */
export const openAiUnauthorized: UnauthorizedResponder = {
  appliesTo: isOpenAiPath,
  respond: async (_request, reply, presented) => sendOpenAiError(reply.header('www-authenticate', 'Bearer realm="homeclaw"'), unauthorizedError(presented)),
};

interface Speaker {
  user_id: string;
  /** The client's conversation id (user_field: conversation). */
  conversation?: string;
}

function speakerOf(principal: Principal, chat: ChatRequest, settings: OpenAiEndpointConfig): Speaker {
  const own = principal.kind === 'user' ? principal.user_id : undefined;
  if (settings.user_field === 'conversation') {
    return { user_id: own ?? settings.default_user, ...(chat.user !== undefined ? { conversation: chat.user } : {}) };
  }
  if (own !== undefined) {
    if (chat.user !== undefined && chat.user !== own) {
      throw new OpenAiRequestError(
        403,
        `This API key acts as "${own}"; it may not speak as "${chat.user}" (leave "user" out or set it to "${own}").`,
        'user',
        'user_mismatch',
        'permission_error',
      );
    }
    return { user_id: own };
  }
  if (chat.user === undefined) return { user_id: settings.default_user };
  if (!isUserId(chat.user)) {
    throw new OpenAiRequestError(
      400,
      `Invalid 'user': a HomeClaw user id is 1 to 128 letters, digits, _ . @ or - (got ${JSON.stringify(chat.user)}).`,
      'user',
      'invalid_value',
    );
  }
  return { user_id: chat.user };
}

function explicitSession(request: FastifyRequest): string | undefined {
  const header = request.headers[SESSION_HEADER];
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !SESSION_ID.test(header)) {
    throw new OpenAiRequestError(400, `The ${SESSION_HEADER} header must be 1 to 128 letters, digits, _ . : or -.`, null, 'invalid_session_header');
  }
  return header;
}

function conversationSession(conversation: string): string {
  return `openai-conv-${SESSION_ID.test(conversation) ? conversation : createHash('sha256').update(conversation).digest('hex').slice(0, 32)}`;
}

export function registerOpenAiRoutes(app: FastifyInstance, deps: OpenAiEndpointDeps): void {
  const { settings, sessions } = deps;
  const log = deps.log.child({ room: 'channels', channel: OPENAI_CHANNEL });
  const modelsCreated = Math.floor(Date.now() / 1000);
  // A client repeating a bad request (or one over its budget) would otherwise write a line per request.
  const refusals = new LogWindow();
  const refused = (request: FastifyRequest, answer: OpenAiRequestError): void =>
    refusals.info(
      log,
      `${request.ip}\u0000${answer.status}\u0000${answer.code ?? ''}`,
      { status: answer.status, code: answer.code, param: answer.param, reason: answer.message },
      'OpenAI request refused',
    );
  const tooManyMessages = (request: FastifyRequest, reply: FastifyReply, retryAfterSec: number): FastifyReply => {
    const error = rateLimitedError(retryAfterSec);
    refused(request, error);
    return sendOpenAiError(reply.header('retry-after', String(retryAfterSec)), error);
  };
  const errorHandler = (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const answer =
      error instanceof OpenAiRequestError
        ? error
        : error.validation
          ? fromValidationErrors(error.validation as ErrorObject[])
          : fromFrameworkError(error, settings.max_body_bytes);
    if (answer.status >= 500) log.error({ err: error, path: request.url }, 'OpenAI endpoint failed');
    else refused(request, answer);
    return sendOpenAiError(reply, answer);
  };
  const route = { ...USER_ROUTE, bodyLimit: settings.max_body_bytes, errorHandler };

  app.get('/v1/models', route, async () => ({ object: 'list', data: [modelObject(OPENAI_MODEL, modelsCreated)] }));
  app.get<{ Params: { model: string } }>('/v1/models/:model', route, async (request) => {
    if (request.params.model !== OPENAI_MODEL) throw modelNotFound(request.params.model);
    return modelObject(OPENAI_MODEL, modelsCreated);
  });

  const chatRoute = { ...route, schema: { body: ChatCompletionRequest }, validatorCompiler: routeValidatorCompiler };
  app.post<{ Body: ChatCompletionRequest }>('/v1/chat/completions', chatRoute, async (request, reply) => {
    const started = Date.now();
    const chat = parseChatRequest(request.body);
    if (chat.model !== OPENAI_MODEL) throw modelNotFound(chat.model);
    const speaker = speakerOf(principalOf(request), chat, settings);
    // Checked before a streamed answer starts, so the client gets the 429 (and Retry-After) its library retries on.
    const wait = deps.engine.retryAfterSec?.(speaker.user_id) ?? 0;
    if (wait > 0) return tooManyMessages(request, reply, wait);
    const explicit = explicitSession(request) ?? (speaker.conversation !== undefined ? conversationSession(speaker.conversation) : undefined);
    // A named session needs no digest; only a session found from the history is remembered by it.
    const session =
      explicit !== undefined
        ? { session_id: explicit, chained: false, continued: 'named' }
        : { ...sessions.sessionFor(speaker.user_id, chat.earlier), chained: true };
    const { session_id } = session;
    const request_id = randomUUID();
    const headers: Record<string, string> = { [SESSION_HEADER]: session_id };
    if (chat.ignored.length > 0) {
      headers['x-homeclaw-note'] = `ignored: ${chat.ignored.join(', ')} (HomeClaw answers with its own plugins)`;
      log.info({ request_id, ignored: chat.ignored }, 'OpenAI request: client tools and non-text content ignored');
    }
    const context = { request_id, user_id: speaker.user_id, session_id, continued: session.continued, stream: chat.stream };

    const answer = async (): Promise<ChannelMessageOut> => {
      const out = await deps.engine.handleMessage({
        channel: OPENAI_CHANNEL,
        channel_type: 'openai',
        user_id: speaker.user_id,
        session_id,
        text: chat.text,
        request_id,
      });
      if (session.chained) {
        try {
          sessions.remember(speaker.user_id, chat.earlier, chat.text, out.text, session_id);
        } catch (err) {
          log.warn({ err, request_id }, 'could not remember the OpenAI conversation; its next turn starts a new session');
        }
      }
      log.info({ ...context, kind: out.kind, plugin_id: out.plugin_id, ms: Date.now() - started }, 'OpenAI chat answered');
      return out;
    };

    const identity = newCompletionIdentity(OPENAI_MODEL, started);
    if (!chat.stream) {
      const out = await answer();
      if (out.error_code === 'rate_limited') return tooManyMessages(request, reply, out.retry_after_sec ?? 1);
      return reply.headers({ ...headers, 'x-homeclaw-kind': out.kind }).send(chatCompletion(identity, out.text));
    }
    reply.hijack();
    const stream = new CompletionStream(reply.raw, identity, headers);
    try {
      const out = await answer();
      if (stream.clientGone) log.info({ request_id }, 'OpenAI client left before the streamed answer');
      stream.finish(out.text, chat.include_usage);
    } catch (err) {
      log.error({ err, request_id }, 'OpenAI streamed answer failed');
      stream.fail('The server had an error while processing your request (see the HomeClaw log).');
    }
    return reply;
  });
}

function modelNotFound(model: string): OpenAiRequestError {
  return new OpenAiRequestError(
    404,
    `The model \`${model}\` does not exist: this endpoint serves only "${OPENAI_MODEL}" (GET /v1/models).`,
    'model',
    'model_not_found',
  );
}
