// JSON.parse keeps a "__proto__" key as ordinary data, but JavaScript gives the name a meaning: copying
// such an object with Object.assign, or setting the key on another object, replaces that object's
// prototype instead of adding a key. The value is then inherited, not carried: a check that reads it
// finds it, while JSON.stringify leaves it out. JSON from outside is refused when it holds the key at any
// depth, as the HTTP parser (Fastify's default) already refuses it.

export const PROTOTYPE_KEY = '__proto__';

/**
 * False when the text cannot hold a "__proto__" key once parsed: it has neither the name nor a \u escape
 * (which could spell it). A cheap test that spares most payloads the walk.
 */
export function mayHoldPrototypeKey(text: string): boolean {
  return text.includes(PROTOTYPE_KEY) || text.includes('\\u');
}

/**
 * The JSON Pointer of the first own "__proto__" key in a parsed JSON value, or undefined. The caller
 * has bounded the value's depth; the walk stops at `maxDepth` levels all the same.
 */
export function findPrototypeKey(value: unknown, maxDepth = 128, path = ''): string | undefined {
  if (value === null || typeof value !== 'object' || maxDepth <= 0) return undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = findPrototypeKey(value[index], maxDepth - 1, `${path}/${index}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (Object.hasOwn(value, PROTOTYPE_KEY)) return `${path}/${PROTOTYPE_KEY}`;
  for (const key of Object.keys(value)) {
    const found = findPrototypeKey((value as Record<string, unknown>)[key], maxDepth - 1, `${path}/${escapePointer(key)}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** What a refusal says: where the key is and why it is refused. */
export function explainPrototypeKey(pointer: string): string {
  return `a "${PROTOTYPE_KEY}" key at ${pointer} is refused: JavaScript would take it for the object's prototype instead of data`;
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
