// Limits every party of the bus applies the same way.

/**
 * The longest a call may take: 24 h. Any longer timeout_sec (capability, plugin config, caller, Core
 * config) or deadline is cut to this. Node's timers hold at most 2^31-1 ms (about 24.8 days) and fire
 * at once beyond that, so an uncapped value would turn a generous timeout into an instant one.
 */
export const MAX_CALL_TIMEOUT_SEC = 86_400;
export const MAX_CALL_TIMEOUT_MS = MAX_CALL_TIMEOUT_SEC * 1000;

/**
 * How deep JSON input may nest objects and arrays. JSON.parse accepts any depth, but every recursive
 * walk after it (serialising, validating, copying, printing) overflows the stack at a few thousand
 * levels; no message of the bus needs more than a few dozen.
 */
export const MAX_JSON_DEPTH = 64;

/** Parameters travel one level down in a request, which must itself stay within MAX_JSON_DEPTH. */
export const MAX_PARAMETER_DEPTH = MAX_JSON_DEPTH - 1;
