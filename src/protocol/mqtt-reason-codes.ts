// MQTT 5 reason codes (OASIS MQTT 5.0, section 2.4) as log lines and error messages name them, plus the
// one MQTT 3.1.1 CONNACK return code the Core acts on. Shared by the Core and the SDK.

const NAMES: Readonly<Record<number, string>> = {
  0x00: 'Success',
  0x10: 'No matching subscribers',
  0x11: 'No subscription existed',
  0x80: 'Unspecified error',
  0x81: 'Malformed Packet',
  0x82: 'Protocol Error',
  0x83: 'Implementation specific error',
  0x84: 'Unsupported Protocol Version',
  0x85: 'Client Identifier not valid',
  0x86: 'Bad User Name or Password',
  0x87: 'Not authorized',
  0x88: 'Server unavailable',
  0x89: 'Server busy',
  0x8a: 'Banned',
  0x8b: 'Server shutting down',
  0x8c: 'Bad authentication method',
  0x8d: 'Keep Alive timeout',
  0x8e: 'Session taken over',
  0x8f: 'Topic Filter invalid',
  0x90: 'Topic Name invalid',
  0x91: 'Packet Identifier in use',
  0x92: 'Packet Identifier not found',
  0x93: 'Receive Maximum exceeded',
  0x94: 'Topic Alias invalid',
  0x95: 'Packet too large',
  0x96: 'Message rate too high',
  0x97: 'Quota exceeded',
  0x98: 'Administrative action',
  0x99: 'Payload format invalid',
  0x9a: 'Retain not supported',
  0x9b: 'QoS not supported',
  0x9c: 'Use another server',
  0x9d: 'Server moved',
  0x9e: 'Shared Subscriptions not supported',
  0x9f: 'Connection rate exceeded',
  0xa0: 'Maximum connect time',
  0xa1: 'Subscription Identifiers not supported',
  0xa2: 'Wildcard Subscriptions not supported',
};

/** PUBACK reason 0x10: the broker accepted the message but no client subscribes to its topic. */
export const NO_MATCHING_SUBSCRIBERS = 0x10;

/** "Not authorized (reason code 0x87)": the spec's name and the code, as operators search for either. */
export function describeReasonCode(code: number): string {
  const hex = `0x${code.toString(16).toUpperCase().padStart(2, '0')}`;
  return `${NAMES[code] ?? 'unknown reason'} (reason code ${hex})`;
}

/**
 * True when a CONNACK refused the protocol version: an MQTT 3.1.1 broker answers a version-5 CONNECT with
 * return code 1 ("unacceptable protocol version", MQTT 3.1.1 section 3.2.2.3, in its own CONNACK format),
 * an MQTT 5 broker configured without version 5 with reason code 0x84. `error` is the client's CONNACK
 * error, which carries the code as a number in `code` (mqtt.js, for both versions).
 */
export function isProtocolVersionRefusal(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 1 || code === 0x84;
}
