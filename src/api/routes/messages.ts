// POST /api/messages: a user message over HTTP, answered with the reply (same shape as on MQTT), or,
// with "async": true, accepted at once (202 {request_id}) and answered on the channel's MQTT out topic.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, preValidationHookHandler } from 'fastify';
import { sendError } from '../errors.js';
import { principalOf, USER_ROUTE } from '../principal-auth.js';
import { validatedRoute } from '../route-validation.js';
import type { ConversationEngine } from '../../conversation/engine.js';
import type { ChannelMessageOut } from '../../protocol/types.js';
import { isPlainObject } from '../../kit/plain-object.js';
import { LogWindow } from '../../kit/log-window.js';
import { silentLogger, type Logger } from '../../log.js';
import { MessageBody } from './messages-schema.js';
import type { SpeakerDecision } from '../../access/channel-bindings.js';

export interface MessageRoutesOptions {
  engine: ConversationEngine;
  /** Publishes a reply on topics.channelOut(channel); without it "async": true is refused. */
  publishReply?: (channel: string, reply: ChannelMessageOut) => Promise<void>;
  /** Logs a failed asynchronous delivery (the HTTP request has already been answered). */
  onAsyncError?: (error: unknown, requestId: string) => void;
  /** Where refusals over the user's message budget are logged (once per user per window); none when absent. */
  log?: Logger;
  /** Whether the channel may carry a message for the user; an async reply to a channel bound to other users is refused. */
  mayCarry?: (channel: string, userId: string) => SpeakerDecision;
}

export async function registerMessageRoutes(app: FastifyInstance, options: MessageRoutesOptions): Promise<void> {
  const route = validatedRoute({ body: MessageBody }, 'invalid message', USER_ROUTE);
  const refusals = new LogWindow();
  const log = options.log ?? silentLogger();
  // A user token speaks as its user: user_id may be left out (it is filled in before validation), and
  // naming anyone else is refused.
  const actAsTokenUser: preValidationHookHandler = async (request) => {
    const principal = principalOf(request);
    if (principal.kind === 'user' && isPlainObject(request.body) && !('user_id' in request.body)) {
      request.body = { ...request.body, user_id: principal.user_id };
    }
  };
  app.post<{ Body: MessageBody }>('/api/messages', { ...route, preValidation: actAsTokenUser }, async (request, reply) => {
    const principal = principalOf(request);
    const body = request.body;
    if (principal.kind === 'user' && body.user_id !== principal.user_id) {
      request.log.warn({ user_id: principal.user_id, claimed: body.user_id }, 'user token tried to send a message as another user');
      return sendError(reply, 403, `this token acts as "${principal.user_id}"; it may not send messages as "${body.user_id}"`, [
        { path: '/user_id', message: `must be "${principal.user_id}" (or left out) with this token` },
      ]);
    }
    // Over the user's message budget: refused in HTTP's own terms before anything is started.
    const wait = options.engine.retryAfterSec?.(body.user_id) ?? 0;
    if (wait > 0) {
      refusals.warn(log, body.user_id, { user_id: body.user_id, channel: body.channel, retry_after_sec: wait }, 'message refused: too many from this user');
      return tooManyMessages(reply, wait);
    }
    if (body.async === true && !options.publishReply) {
      return sendError(reply, 400, 'asynchronous replies are not available: no MQTT channel publisher', [
        { path: '/async', message: 'asynchronous replies are not available: no MQTT channel publisher' },
      ]);
    }
    // The reply would land on another user's device: the channel's out topic is theirs to read.
    const carried = body.async === true ? (options.mayCarry?.(body.channel, body.user_id) ?? { allowed: true }) : { allowed: true as const };
    if (!carried.allowed) {
      refusals.warn(
        log,
        `carry\u0000${body.user_id}`,
        { user_id: body.user_id, channel: body.channel },
        'async reply refused: the channel belongs to other users',
      );
      return sendError(reply, 403, carried.reason, [{ path: '/channel', message: carried.reason }]);
    }
    // An async client needs the request_id up front to match the MQTT reply, so the route picks it.
    const request_id = body.async === true ? (body.request_id ?? randomUUID()) : body.request_id;
    const answer = options.engine.handleMessage({
      channel: body.channel,
      user_id: body.user_id,
      text: body.text,
      ...(request_id !== undefined ? { request_id } : {}),
      ...(body.session_id !== undefined ? { session_id: body.session_id } : {}),
      ...(body.user_name !== undefined ? { user_name: body.user_name } : {}),
      ...(body.timezone !== undefined ? { timezone: body.timezone } : {}),
      ...(body.location !== undefined ? { location: body.location } : {}),
      channel_type: body.channel_type ?? 'http',
      ...(body.app_id !== undefined ? { app_id: body.app_id } : {}),
      ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
    });
    if (body.async === true && options.publishReply) {
      const publish = options.publishReply;
      // The engine never rejects; a failed publish is logged, the client already has its request_id.
      void answer.then((out) => publish(body.channel, out)).catch((error: unknown) => options.onAsyncError?.(error, request_id as string));
      return reply.code(202).send({ request_id, channel: body.channel, user_id: body.user_id });
    }
    const out = await answer;
    if (out.error_code === 'rate_limited') return tooManyMessages(reply, out.retry_after_sec ?? 1);
    return reply.code(200).send(out);
  });
}

function tooManyMessages(reply: FastifyReply, retryAfterSec: number): FastifyReply {
  return sendError(
    reply.header('retry-after', String(retryAfterSec)),
    429,
    `too many messages from this user; try again in ${retryAfterSec} s (conversation.max_messages_per_minute)`,
  );
}
