// The MQTT 5 side of the external bus: message properties in and out (expiry, user properties), the
// largest packet the broker accepts (CONNACK Maximum Packet Size), and its refusals (PUBACK/SUBACK
// reason codes) logged without flooding.
import type { IClientPublishOptions, IPublishPacket } from 'mqtt';
import type { Logger } from '../log.js';
import { describeReasonCode } from '../protocol/mqtt-reason-codes.js';
import type { MessageProperties, PublishOptions, PublishReceipt } from './core-bus.js';
import { LogWindow } from '../kit/log-window.js';

export const NO_SUBSCRIBERS: PublishReceipt = Object.freeze({ noSubscribers: true });
export const DELIVERED: PublishReceipt = Object.freeze({});

/** The MQTT 5 properties of an outgoing message, or undefined when it has none. */
export function publishProperties(options: PublishOptions): IClientPublishOptions['properties'] {
  if (options.expirySec === undefined && options.userProperties === undefined) return undefined;
  const properties: NonNullable<IClientPublishOptions['properties']> = {};
  if (options.expirySec !== undefined) properties.messageExpiryInterval = options.expirySec;
  if (options.userProperties !== undefined) properties.userProperties = options.userProperties;
  return properties;
}

/** The properties of an incoming MQTT 5 message that the Core reads. */
export function messageProperties(properties: NonNullable<IPublishPacket['properties']>): MessageProperties {
  const out: MessageProperties = {};
  if (properties.messageExpiryInterval !== undefined) out.expirySec = properties.messageExpiryInterval;
  if (properties.userProperties !== undefined) out.userProperties = properties.userProperties;
  return out;
}

/**
 * A packet over the broker's announced maximum would make it close the connection, failing every call in
 * flight: such a message is refused before sending. Only a payload that could be too large is measured.
 */
export function oversize(
  topic: string,
  payload: string | Buffer,
  qos: 0 | 1,
  options: PublishOptions,
  max: number | undefined,
): PacketTooLargeError | undefined {
  if (max === undefined || payload.length * 3 + publishOverheadBound(topic, options.userProperties) <= max) return undefined;
  const bytes = publishPacketBytes(topic, Buffer.byteLength(payload), qos, options.expirySec, options.userProperties);
  return bytes > max ? new PacketTooLargeError(bytes, max, topic) : undefined;
}

/** A publish the broker would refuse by size; nothing was sent, and the connection stays up. */
export class PacketTooLargeError extends Error {
  constructor(
    readonly packetBytes: number,
    readonly maxBytes: number,
    topic: string,
  ) {
    super(
      `the message on ${topic} would be a ${packetBytes}-byte MQTT packet, more than the broker's maximum packet size of ` +
        `${maxBytes} bytes (announced in its CONNACK); nothing was sent`,
    );
    this.name = 'PacketTooLargeError';
  }
}

function varIntBytes(value: number): number {
  return value < 128 ? 1 : value < 16_384 ? 2 : value < 2_097_152 ? 3 : 4;
}

/**
 * The exact size of an MQTT 5 PUBLISH packet (MQTT 5.0 section 3.3): fixed header, topic, packet id at
 * QoS 1, properties (Message Expiry Interval, user properties) and payload.
 */
export function publishPacketBytes(topic: string, payloadBytes: number, qos: 0 | 1, expirySec?: number, userProperties?: Record<string, string>): number {
  let properties = expirySec !== undefined ? 5 : 0;
  for (const [name, value] of Object.entries(userProperties ?? {})) {
    properties += 1 + 2 + Buffer.byteLength(name) + 2 + Buffer.byteLength(value);
  }
  const remaining = 2 + Buffer.byteLength(topic) + (qos > 0 ? 2 : 0) + varIntBytes(properties) + properties + payloadBytes;
  return 1 + varIntBytes(remaining) + remaining;
}

/** Upper bound of everything but the payload's bytes, for a cheap first check that needs no byte count. */
export function publishOverheadBound(topic: string, userProperties?: Record<string, string>): number {
  let bound = 1 + 4 + 2 + topic.length * 3 + 2 + 4 + 5;
  for (const [name, value] of Object.entries(userProperties ?? {})) bound += 5 + (name.length + value.length) * 3;
  return bound;
}

/**
 * Logs a broker's refusals by reason code, at most once per code and kind per window with a count of
 * the ones left out: a broker refusing every publish under load must not turn into one log line each.
 */
export class ReasonLog {
  private readonly window: LogWindow;

  constructor(
    private readonly log: Logger,
    windowMs = 10_000,
  ) {
    this.window = new LogWindow(windowMs);
  }

  refused(kind: 'publish' | 'subscribe', code: number, detail: Record<string, unknown>): void {
    this.window.warn(
      this.log,
      `${kind}:${code}`,
      { ...detail, reason: describeReasonCode(code), reason_code: code },
      `the broker refused a ${kind}`,
      'similar_refusals_not_logged',
    );
  }
}
