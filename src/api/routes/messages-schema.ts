// The body of POST /api/messages: the channel-message-in payload of the MQTT topic plus the channel it
// comes from and the HTTP-only choice of an asynchronous reply. Validates the request and is what the
// OpenAPI document shows for it.
import { type Static, Type } from '@sinclair/typebox';
import { CHANNEL_ID_PATTERN, REQUEST_ID_PATTERN } from '../../protocol/ids.js';
import type { JsonObject } from '../../protocol/types.js';

const text = (options: { minLength?: number; maxLength?: number; description?: string } = {}) => Type.String(options);

export const MessageBody = Type.Object(
  {
    channel: Type.String({ pattern: CHANNEL_ID_PATTERN.source, description: 'The channel the message comes from (e.g. web, kitchen).' }),
    user_id: Type.String({
      minLength: 1,
      maxLength: 256,
      pattern: '\\S',
      description: 'Who speaks. With a user token it may be left out (the token acts as its user) and may name only that user.',
    }),
    text: text(),
    request_id: Type.Optional(Type.String({ pattern: REQUEST_ID_PATTERN.source, description: 'Echoed on the reply; chosen by the Core when absent.' })),
    session_id: Type.Optional(text()),
    user_name: Type.Optional(text()),
    timezone: Type.Optional(text()),
    location: Type.Optional(text()),
    channel_type: Type.Optional(text({ minLength: 1, maxLength: 64, description: 'The kind of channel (e.g. IM, EMAIL); default http. Passed to plugins.' })),
    app_id: Type.Optional(text({ minLength: 1, maxLength: 128, description: "The assistant instance the message is for; default the Core's app_id." })),
    metadata: Type.Optional(Type.Unsafe<JsonObject>({ type: 'object', description: 'Passed to plugins as PluginRequest.metadata.' })),
    async: Type.Optional(Type.Boolean({ description: "true: answer 202 {request_id} at once and publish the reply on the channel's MQTT out topic." })),
  },
  { additionalProperties: false, description: 'A user message over HTTP: the channel-message-in payload plus the channel it comes from.' },
);
export type MessageBody = Static<typeof MessageBody>;
