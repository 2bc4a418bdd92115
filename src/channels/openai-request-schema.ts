// The body of POST /v1/chat/completions as HomeClaw reads it: it validates the request (refusals in
// OpenAI's error shape, see openai-errors.ts) and is what the OpenAPI document shows. Unknown fields
// (sampling options, tools) are allowed: OpenAI's own API ignores fields it does not know, and HomeClaw
// says which ones it ignored.
import { type Static, Type } from '@sinclair/typebox';

export const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;

/** A part of a message's content: text is read, other kinds (images, audio) are ignored with a note. */
const ContentPart = Type.Unsafe<{ type: string; text?: string }>({
  type: 'object',
  required: ['type'],
  properties: { type: { type: 'string' }, text: { type: 'string' } },
  if: { properties: { type: { enum: ['text'] } } },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword, not a thenable.
  then: { required: ['text'] },
});

const ChatMessage = Type.Object({
  role: Type.Unsafe<(typeof CHAT_ROLES)[number]>({ type: 'string', enum: [...CHAT_ROLES] }),
  content: Type.Optional(
    Type.Unsafe<string | { type: string; text?: string }[] | null>({
      type: ['string', 'array', 'null'],
      items: ContentPart,
      description: 'A string or an array of content parts; only text parts are read.',
    }),
  ),
});

export const ChatCompletionRequest = Type.Object(
  {
    model: Type.String({ description: 'homeclaw, the one model this endpoint serves.' }),
    messages: Type.Array(ChatMessage, { minItems: 1, description: 'The whole conversation; the last user message is answered.' }),
    stream: Type.Optional(Type.Unsafe<boolean | null>({ type: ['boolean', 'null'] })),
    stream_options: Type.Optional(Type.Unsafe<{ include_usage?: boolean } | null>({ description: 'include_usage: true adds a last chunk with the usage.' })),
    user: Type.Optional(
      Type.Unsafe<string | null>({
        type: ['string', 'null'],
        minLength: 1,
        maxLength: 256,
        description: 'The HomeClaw user (openai_endpoint.user_field: user) or the client conversation id (user_field: conversation).',
      }),
    ),
    n: Type.Optional(Type.Unsafe<1 | null>({ enum: [1, null], description: 'HomeClaw gives exactly one answer.' })),
  },
  {
    description: 'OpenAI chat completion request. Sampling options are ignored; tools and tool messages are ignored (see the x-homeclaw-note response header).',
  },
);
export type ChatCompletionRequest = Static<typeof ChatCompletionRequest>;
