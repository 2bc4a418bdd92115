// Checks a plugin result's data against a capability's declared output schema before it is offered to
// an MCP client as structuredContent (MCP clients reject structured content that does not match).
import { Ajv, type ValidateFunction } from 'ajv';
import type { JsonObject, JsonValue } from '../protocol/types.js';
import { isPlainObject } from '../kit/plain-object.js';

const CACHE_LIMIT = 2000;

export class OutputSchemaCheck {
  // strict:false and no $schema: output schemas come from arbitrary MCP servers and manifests
  // (draft-07 from zod, 2020-12 from hand-written ones); the common keyword subset is what matters.
  private readonly ajv = new Ajv({ allErrors: false, strict: false, validateSchema: false });
  private readonly cache = new Map<string, ValidateFunction>();

  /** undefined when the data fits, else a one-line explanation. */
  problem(schema: JsonObject, data: JsonValue | undefined): string | undefined {
    if (!isPlainObject(data)) return 'the result has no structured object data';
    const key = JSON.stringify(schema);
    let validate = this.cache.get(key);
    if (!validate) {
      const { $schema: _ignored, ...rest } = schema;
      try {
        validate = this.ajv.compile(rest);
      } catch (err) {
        return `the output schema cannot be compiled: ${(err as Error).message}`;
      }
      if (this.cache.size >= CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(key, validate);
    }
    if (validate(data)) return undefined;
    const first = validate.errors?.[0];
    return first ? `${first.instancePath || '/'} ${first.message ?? 'is invalid'}` : 'does not match';
  }
}
