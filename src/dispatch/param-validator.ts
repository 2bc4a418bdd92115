// Validates invocation parameters against a capability's JSON Schema before anything is sent, so a
// plugin (possibly a microcontroller) never receives a call it cannot handle.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { capabilityInputSchema } from '../protocol/descriptor/json-schema.js';
import type { CapabilitySpec, ValidationIssue } from '../protocol/types.js';

// ajv-formats is CommonJS: its default export arrives wrapped under NodeNext.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export class ParamValidator {
  private readonly ajv = new Ajv2020({ allErrors: true, strict: false });
  private readonly cache = new Map<string, ValidateFunction>();

  constructor() {
    addFormats(this.ajv);
  }

  /** cacheKey must change whenever the capability changes (the registry's content hash does). */
  validate(cacheKey: string, capability: CapabilitySpec, parameters: unknown): ValidationIssue[] {
    const key = `${cacheKey}:${capability.id}`;
    let fn = this.cache.get(key);
    if (!fn) {
      fn = this.ajv.compile(capabilityInputSchema(capability));
      this.cache.set(key, fn);
      if (this.cache.size > 5000) this.cache.delete(this.cache.keys().next().value as string);
    }
    if (fn(parameters)) return [];
    return (fn.errors ?? []).map((e) => {
      const missing = e.keyword === 'required' ? `/${String((e.params as { missingProperty?: string }).missingProperty)}` : '';
      const extra = e.keyword === 'additionalProperties' ? `/${String((e.params as { additionalProperty?: string }).additionalProperty)}` : '';
      const path = `${e.instancePath}${missing}${extra}`;
      const message =
        e.keyword === 'additionalProperties'
          ? `unknown parameter "${String((e.params as { additionalProperty?: string }).additionalProperty)}"`
          : e.keyword === 'required'
            ? `missing required parameter "${String((e.params as { missingProperty?: string }).missingProperty)}"`
            : `${e.instancePath ? `parameter ${e.instancePath.slice(1)}` : 'parameters'} ${e.message ?? 'is invalid'}`;
      return { path, message };
    });
  }
}
