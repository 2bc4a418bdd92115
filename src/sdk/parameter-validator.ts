// Checks invocation parameters against each capability's JSON Schema before a handler runs, so handler
// code can trust the shape of what it receives. Schemas are compiled once, at connect time.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { capabilityInputSchema } from '../protocol/descriptor/json-schema.js';
import type { CapabilitySpec, ValidationIssue } from '../protocol/types.js';

// ajv-formats is CommonJS: under NodeNext its default import is the plugin function typed as a module.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export class ParameterValidator {
  private readonly validators = new Map<string, ValidateFunction>();

  /** Throws when a capability's schema cannot be compiled: that is a bug in the descriptor. */
  constructor(capabilities: CapabilitySpec[]) {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats(ajv);
    for (const capability of capabilities) {
      this.validators.set(capability.id, ajv.compile(capabilityInputSchema(capability)));
    }
  }

  /** Every problem with the parameters, or an empty list when they fit. */
  check(capabilityId: string, parameters: unknown): ValidationIssue[] {
    const validate = this.validators.get(capabilityId);
    if (!validate) return [{ path: '', message: `no schema for capability "${capabilityId}"` }];
    if (validate(parameters)) return [];
    return (validate.errors ?? []).map(describeError);
  }
}

function describeError(error: ErrorObject): ValidationIssue {
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  if (error.keyword === 'required' && params.missingProperty !== undefined) {
    return {
      path: `${error.instancePath}/${params.missingProperty}`,
      message: `missing required parameter "${params.missingProperty}"`,
    };
  }
  if (error.keyword === 'additionalProperties' && params.additionalProperty !== undefined) {
    return {
      path: `${error.instancePath}/${params.additionalProperty}`,
      message: `unknown parameter "${params.additionalProperty}"`,
    };
  }
  const subject = error.instancePath ? `parameter ${error.instancePath.slice(1)}` : 'parameters';
  return { path: error.instancePath, message: `${subject} ${error.message ?? 'is invalid'}` };
}
