// Capability fields shared by the dialects that can state them (HomeClaw fully; ForgeSyte and RAGFlow
// only through their own keys, but an MQTT plugin may add these to its metadata).
import type { CapabilitySpec } from '../types.js';
import { FieldReader, type IssueList, at, describe } from './issues.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export type CapabilityExtras = Pick<
  CapabilitySpec,
  'output_description' | 'post_process' | 'post_process_prompt' | 'method' | 'path' | 'timeout_sec' | 'requires_confirmation' | 'wants_context'
>;

export const CAPABILITY_EXTRA_KEYS = [
  'output_description',
  'post_process',
  'post_process_prompt',
  'method',
  'path',
  'timeout_sec',
  'requires_confirmation',
  'wants_context',
] as const;

export function readCapabilityExtras(source: Record<string, unknown>, path: string, issues: IssueList): CapabilityExtras {
  const fields = new FieldReader(source, path, issues);
  // Default false: output goes to the channel as is unless the plugin asks for LLM post-processing.
  const extras: CapabilityExtras = { post_process: fields.boolean('post_process') ?? false };
  const output = source['output_description'];
  if (output !== undefined && output !== null) {
    // output_description may be plain text or a JSON schema/example; structured ones are kept as JSON text.
    if (typeof output === 'string') extras.output_description = output;
    else if (typeof output === 'object') extras.output_description = JSON.stringify(output);
    else issues.error(at(path, 'output_description'), `must be a string or a JSON example, not ${describe(output)}`);
  }
  const prompt = fields.string('post_process_prompt');
  if (prompt !== undefined) extras.post_process_prompt = prompt;
  const method = source['method'];
  if (method !== undefined && method !== null) {
    const upper = typeof method === 'string' ? method.toUpperCase() : undefined;
    if (upper && (METHODS as readonly string[]).includes(upper)) extras.method = upper as CapabilitySpec['method'];
    else issues.error(at(path, 'method'), `unknown HTTP method ${describe(method)}; allowed: ${METHODS.join(', ')}`);
  }
  const httpPath = fields.string('path', { nonEmpty: true });
  if (httpPath !== undefined) extras.path = httpPath;
  const timeout = fields.number('timeout_sec', { exclusiveMin: 0 });
  if (timeout !== undefined) extras.timeout_sec = timeout;
  // Only a true flag is kept: absent and false mean the same, and the canonical form stays minimal.
  if (fields.boolean('requires_confirmation') === true) extras.requires_confirmation = true;
  if (fields.boolean('wants_context') === true) extras.wants_context = true;
  return extras;
}
