// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` value that links an
// invocation to the trace it belongs to. With MQTT 5 the Core sends it as a user property of the invoke
// message; HTTP callers may pass theirs in the `traceparent` header.
//
//   traceparent = version "-" trace-id "-" parent-id "-" trace-flags
//   00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
//
// Each invocation is its own span: the parent-id the plugin sees identifies the Core's call, the trace-id
// is the caller's when one was given, else the request id itself (a UUID is 32 hex digits), so a plugin's
// trace id and the Core's request id name the same call in both logs.
import { randomBytes } from 'node:crypto';

export interface TraceParent {
  trace_id: string;
  parent_id: string;
  flags: string;
}

const HEX = /^[0-9a-f]+$/;
const ZEROS = /^0+$/;
/** The length of a version-00 traceparent. */
const LENGTH = 55;

/**
 * The fields of a valid traceparent, or undefined (the header is then ignored, as the spec requires). A
 * version above 00 is read by its first 55 characters, which later versions keep.
 */
export function parseTraceparent(value: unknown): TraceParent | undefined {
  if (typeof value !== 'string' || value.length < LENGTH) return undefined;
  const version = value.slice(0, 2);
  if (!HEX.test(version) || version === 'ff') return undefined;
  if (version === '00' ? value.length !== LENGTH : value.length > LENGTH && value[LENGTH] !== '-') return undefined;
  if (value[2] !== '-' || value[35] !== '-' || value[52] !== '-') return undefined;
  const trace_id = value.slice(3, 35);
  const parent_id = value.slice(36, 52);
  const flags = value.slice(53, 55);
  if (!HEX.test(trace_id) || ZEROS.test(trace_id) || !HEX.test(parent_id) || ZEROS.test(parent_id) || !HEX.test(flags)) return undefined;
  return { trace_id, parent_id, flags };
}

/**
 * The traceparent for one invocation: within the caller's trace when `parent` is a valid traceparent,
 * else a new trace named after the request id. The span id comes from the request id too (a random UUID),
 * so nothing random is drawn per call.
 */
export function invocationTraceparent(requestId: string, parent?: string): string {
  const hex = requestId.replace(/-/g, '').toLowerCase();
  const fromRequest = hex.length === 32 && HEX.test(hex) && !ZEROS.test(hex);
  const spanId = fromRequest && !ZEROS.test(hex.slice(16)) ? hex.slice(16) : randomBytes(8).toString('hex');
  const caller = parent === undefined ? undefined : parseTraceparent(parent);
  if (caller) return `00-${caller.trace_id}-${spanId}-${caller.flags}`;
  const traceId = fromRequest ? hex : randomBytes(16).toString('hex');
  // Flags 00: the Core records no trace data of its own; a caller's trace keeps the caller's flags.
  return `00-${traceId}-${spanId}-00`;
}
