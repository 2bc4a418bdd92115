// What went wrong, as text for a log line or an error reply, from whatever a catch block received.

/** The message of an Error, or the thrown value as a string (code may throw strings, numbers, null). */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * What a plugin author's handler threw, described for the caller who gets the failed result. Handlers
 * written by others throw anything: an Error without a message (its name is used then), a string, a
 * plain object (shown as JSON rather than "[object Object]"). The reason is never empty.
 */
export function thrownValueMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === 'string' ? error : (JSON.stringify(error) ?? String(error));
}
