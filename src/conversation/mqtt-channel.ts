// The MQTT side of channels: user messages on the channel in topic (topics.channelIn), replies on its out topic with the
// same request_id and user_id. Bad input never throws: an error reply when the channel name is valid
// (so the sender learns what was wrong), otherwise a log line.
import { randomUUID } from 'node:crypto';
import type { CoreBus, IncomingMessage, PublisherIdentity } from '../bus/core-bus.js';
import type { Logger } from '../log.js';
import { isChannelId, isRequestId } from '../protocol/ids.js';
import { filters, parseTopic, topics } from '../protocol/topics.js';
import type { ChannelMessageIn, ChannelMessageOut } from '../protocol/types.js';
import { parseJsonPayload, validatePayload } from '../protocol/validate.js';
import type { ConversationEngine } from './engine.js';
import { formatIssues } from '../kit/format-issues.js';
import { subscribeTracked } from '../bus/tracked-subscription.js';

export interface MqttChannelOptions {
  bus: CoreBus;
  engine: ConversationEngine;
  log: Logger;
  /** Larger payloads are refused before parsing (config broker.max_payload_bytes). */
  max_payload_bytes: number;
  /**
   * Whether the client that published may speak as the message's user (channel bindings). A refusal is
   * answered on the channel's out topic and nothing else happens. Absent: every user is accepted.
   */
  authorizeSpeaker?: (input: { channel: string; user_id: string; publisher?: PublisherIdentity }) => { allowed: true } | { allowed: false; reason: string };
}

export interface MqttChannels {
  /** Unsubscribes and waits for replies still being computed. */
  stop(): Promise<void>;
}

export async function attachMqttChannels(options: MqttChannelOptions): Promise<MqttChannels> {
  const { bus, engine, log } = options;

  async function publishReply(channel: string, reply: ChannelMessageOut): Promise<void> {
    try {
      await bus.publish(topics.channelOut(channel), JSON.stringify(reply), { qos: 1 });
    } catch (error) {
      log.warn({ err: error, channel, request_id: reply.request_id }, 'could not publish a channel reply');
    }
  }

  async function handle(message: IncomingMessage): Promise<void> {
    const parsedTopic = parseTopic(message.topic);
    const channel = parsedTopic?.kind === 'channel/in' ? parsedTopic.param : undefined;
    if (!isChannelId(channel)) {
      log.warn({ topic: message.topic, client_id: message.publisher?.clientId }, 'message on an invalid channel name dropped');
      return;
    }
    const parsed = parseJsonPayload(message.payload, options.max_payload_bytes);
    if (!parsed.ok) {
      log.warn({ channel, errors: parsed.errors }, 'invalid JSON on a channel in topic');
      await publishReply(channel, errorReply({}, `Invalid message: ${parsed.errors.map((e) => e.message).join('; ')}`));
      return;
    }
    const validated = validatePayload('channel/in', parsed.value);
    if (!validated.ok) {
      const problems = formatIssues(validated.errors, { root: 'omit' });
      log.warn({ channel, errors: validated.errors }, 'invalid channel message');
      await publishReply(channel, errorReply(parsed.value, `Invalid message: ${problems}`));
      return;
    }
    const input: ChannelMessageIn = validated.value;
    const speaker = options.authorizeSpeaker?.({ channel, user_id: input.user_id, ...(message.publisher ? { publisher: message.publisher } : {}) });
    if (speaker && !speaker.allowed) {
      log.warn(
        { channel, user_id: input.user_id, client_id: message.publisher?.clientId, username: message.publisher?.username, reason: speaker.reason },
        'channel message for a user the sender may not speak as refused',
      );
      await publishReply(channel, errorReply(parsed.value, `This message was refused: ${speaker.reason}.`));
      return;
    }
    const reply = await engine.handleMessage({
      channel,
      user_id: input.user_id,
      text: input.text,
      ...(input.session_id !== undefined ? { session_id: input.session_id } : {}),
      ...(input.request_id !== undefined ? { request_id: input.request_id } : {}),
      ...(input.user_name !== undefined ? { user_name: input.user_name } : {}),
      ...(input.timezone !== undefined ? { timezone: input.timezone } : {}),
      ...(input.location !== undefined ? { location: input.location } : {}),
      channel_type: input.channel_type ?? 'mqtt',
      ...(input.app_id !== undefined ? { app_id: input.app_id } : {}),
      ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
    });
    await publishReply(channel, reply);
  }

  return subscribeTracked(bus, filters.channelIn, handle, (error, message) => {
    log.error({ err: error, topic: message.topic }, 'channel message handling failed');
  });
}

/** An error reply echoing whatever request_id / user_id the sender gave, when usable. */
function errorReply(value: Record<string, unknown>, text: string): ChannelMessageOut {
  const requestId = isRequestId(value.request_id) ? value.request_id : randomUUID();
  const userId = typeof value.user_id === 'string' && value.user_id.length <= 256 ? value.user_id : '';
  const sessionId = typeof value.session_id === 'string' && value.session_id.length <= 256 ? value.session_id : undefined;
  return { request_id: requestId, user_id: userId, ...(sessionId !== undefined ? { session_id: sessionId } : {}), text, kind: 'error' };
}
