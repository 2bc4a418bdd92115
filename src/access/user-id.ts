// User ids name people (alice, bob@home): they appear in profiles, tokens, channel bindings, policy and
// the audit log, so one pattern decides what a user id may look like everywhere.

export const USER_ID_PATTERN = /^[A-Za-z0-9_.@-]{1,128}$/;

export function isUserId(value: unknown): value is string {
  return typeof value === 'string' && USER_ID_PATTERN.test(value);
}

export function explainBadUserId(value: unknown): string {
  if (typeof value !== 'string') return 'user id must be a string';
  if (value.length === 0) return 'user id must not be empty';
  if (value.length > 128) return `user id is ${value.length} characters long; at most 128 are allowed`;
  return `user id "${value}" must match ${USER_ID_PATTERN.source} (letters, digits, _ . @ and -)`;
}
