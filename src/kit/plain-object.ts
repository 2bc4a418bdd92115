// A JSON-like object: not null, not an array. Every reader of untrusted JSON asks this first.

type ObjectMembers<T> = Extract<T, Record<string, unknown>>;

/**
 * What isPlainObject narrows to: the object members of a union such as JsonValue (so JSON stays JSON),
 * or a record of unknowns when the type has none (`unknown`, `{}`).
 */
export type PlainObjectPart<T> = [ObjectMembers<T>] extends [never] ? Record<string, unknown> : ObjectMembers<T>;

/** True for `{...}` values; false for null, arrays and every primitive. */
export function isPlainObject<T>(value: T): value is T & PlainObjectPart<T> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
