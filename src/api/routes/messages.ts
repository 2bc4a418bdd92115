// POST /api/messages: a user message over HTTP, answered with the reply (same shape as on MQTT), or,
// with "async": true, accepted at once (202 {request_id}) and answered on the channel's MQTT out topic.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { sendError } from '../errors.js';
import { principalOf, USER_ROUTE } from '../principal-auth.js';
import type { ConversationEngine, UserMessage } from '../../conversation/engine.js';
import { explainBadId, isChannelId, isRequestId } from '../../protocol/ids.js';
import type { ChannelMessageOut, ValidationIssue } from '../../protocol/types.js';
import { isPlainObject } from '../../kit/plain-object.js';

export interface MessageRoutesOptions {
  engine: ConversationEngine;
  /** Publishes a reply on topics.channelOut(channel); without it "async": true is refused. */
  publishReply?: (channel: string, reply: ChannelMessageOut) => Promise<void>;
  /** Logs a failed asynchronous delivery (the HTTP request has already been answered). */
  onAsyncError?: (error: unknown, requestId: string) => void;
}

/** A user message as the engine takes it, plus the HTTP-only choice of an asynchronous reply. */
type MessageBody = UserMessage & { async?: boolean };

const OPTIONAL_STRINGS = ['session_id', 'user_name', 'timezone', 'location', 'channel_type', 'app_id'] as const;
const KNOWN_FIELDS = new Set([
  'channel',
  'user_id',
  'session_id',
  'text',
  'request_id',
  'user_name',
  'timezone',
  'location',
  'channel_type',
  'app_id',
  'metadata',
  'async',
]);

/** Every problem of the body at once, so a client fixes them in one go. */
export function checkMessageBody(body: unknown): { ok: true; value: MessageBody } | { ok: false; errors: ValidationIssue[] } {
  if (!isPlainObject(body)) {
    return { ok: false, errors: [{ path: '', message: 'the body must be a JSON object {channel, user_id, session_id?, text}' }] };
  }
  const value = body as Record<string, unknown>;
  const errors: ValidationIssue[] = [];
  if (!isChannelId(value.channel)) errors.push({ path: '/channel', message: explainBadId(value.channel, 'channel') });
  if (typeof value.user_id !== 'string' || value.user_id.trim() === '') errors.push({ path: '/user_id', message: 'user_id must be a non-empty string' });
  else if (value.user_id.length > 256) errors.push({ path: '/user_id', message: 'user_id must be at most 256 characters' });
  if (typeof value.text !== 'string') errors.push({ path: '/text', message: 'text must be a string' });
  if (value.request_id !== undefined && !isRequestId(value.request_id)) {
    errors.push({ path: '/request_id', message: 'request_id must match ^[A-Za-z0-9_-]{1,128}$' });
  }
  for (const field of OPTIONAL_STRINGS) {
    if (value[field] !== undefined && typeof value[field] !== 'string') errors.push({ path: `/${field}`, message: `${field} must be a string` });
  }
  // The same bounds as channel-message-in.schema.json: these travel to every plugin called.
  for (const [field, max] of [
    ['channel_type', 64],
    ['app_id', 128],
  ] as const) {
    const text = value[field];
    if (typeof text === 'string' && (text.length === 0 || text.length > max))
      errors.push({ path: `/${field}`, message: `${field} must be 1-${max} characters` });
  }
  if (value.metadata !== undefined && !isPlainObject(value.metadata)) {
    errors.push({ path: '/metadata', message: 'metadata must be an object' });
  }
  if (value.async !== undefined && typeof value.async !== 'boolean') errors.push({ path: '/async', message: 'async must be a boolean' });
  for (const field of Object.keys(value)) {
    if (!KNOWN_FIELDS.has(field)) errors.push({ path: `/${field}`, message: `unknown field "${field}"` });
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, value: value as unknown as MessageBody };
}

export async function registerMessageRoutes(app: FastifyInstance, options: MessageRoutesOptions): Promise<void> {
  app.post('/api/messages', USER_ROUTE, async (request, reply) => {
    const principal = principalOf(request);
    // A user token speaks as its user: user_id may be left out, and naming anyone else is refused.
    const raw = request.body;
    const withUser =
      principal.kind === 'user' && isPlainObject(raw) && !('user_id' in raw) ? { ...(raw as Record<string, unknown>), user_id: principal.user_id } : raw;
    const checked = checkMessageBody(withUser);
    if (!checked.ok) return sendError(reply, 400, 'invalid message', checked.errors);
    const body = checked.value;
    if (principal.kind === 'user' && body.user_id !== principal.user_id) {
      request.log.warn({ user_id: principal.user_id, claimed: body.user_id }, 'user token tried to send a message as another user');
      return sendError(reply, 403, `this token acts as "${principal.user_id}"; it may not send messages as "${body.user_id}"`, [
        { path: '/user_id', message: `must be "${principal.user_id}" (or left out) with this token` },
      ]);
    }
    if (body.async === true && !options.publishReply) {
      return sendError(reply, 400, 'asynchronous replies are not available: no MQTT channel publisher', [
        { path: '/async', message: 'asynchronous replies are not available: no MQTT channel publisher' },
      ]);
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
    return reply.code(200).send(await answer);
  });
}
