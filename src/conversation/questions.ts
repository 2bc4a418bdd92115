// The words the user (and the model) sees when a plugin call cannot run yet: one question covering every
// missing, invalid and uncertain value, showing the values to confirm so nobody confirms blindly.
import type { CapabilitySpec, JsonValue, ParameterSpec } from '../protocol/types.js';
import type { InvalidValue, ResolvedValue, ValueSource } from './resolver-api.js';

export interface QuestionInput {
  capability: CapabilitySpec;
  missing: ParameterSpec[];
  invalid: InvalidValue[];
  uncertain: ResolvedValue[];
}

const SOURCE_PHRASES: Record<ValueSource, string> = {
  explicit: 'from your message',
  confirmed: 'confirmed by you',
  system: 'from the request',
  profile: 'from your profile',
  config: 'from the plugin settings',
  default: 'the default',
};

export function sourcePhrase(source: ValueSource): string {
  return SOURCE_PHRASES[source];
}

/** "a", "a and b", "a, b and c". */
export function joinWithAnd(parts: string[]): string {
  if (parts.length <= 1) return parts.join('');
  return `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

/** Strings quoted, everything else as JSON, so "123" the text and 123 the number read differently. */
export function showValue(value: JsonValue): string {
  return typeof value === 'string' ? `"${value}"` : JSON.stringify(value);
}

function describeParameter(parameter: ParameterSpec): string {
  const description = parameter.description?.trim().replace(/[.\s]+$/, '');
  return description ? `${parameter.name} (${description})` : parameter.name;
}

function invalidSentence(invalid: InvalidValue): string {
  return `${showValue(invalid.value)} is not a valid ${invalid.name}: it ${invalid.reason}.`;
}

function uncertainSentence(uncertain: ResolvedValue[]): string {
  const sources = new Set(uncertain.map((value) => value.source));
  if (sources.size === 1) {
    const items = uncertain.map((value) => `${value.name} as ${showValue(value.value)}`);
    return `I have your ${joinWithAnd(items)} (${sourcePhrase(uncertain[0]!.source)}).`;
  }
  const items = uncertain.map((value) => `${value.name} as ${showValue(value.value)} (${sourcePhrase(value.source)})`);
  return `I have your ${joinWithAnd(items)}.`;
}

function example(names: string[]): string {
  return names.map((name) => `${name}=...`).join(' ');
}

/** One user-facing question for everything that keeps the call from running. */
export function buildQuestion(input: QuestionInput): string {
  const { capability, missing, invalid, uncertain } = input;
  const sentences: string[] = [];
  for (const bad of invalid) sentences.push(invalidSentence(bad));

  const needed = [...invalid.map((bad) => bad.name), ...missing.map((p) => p.name)];
  const missingSpecs = missing.map(describeParameter);
  const invalidSpecs = invalid.map((bad) => {
    const spec = capability.parameters.find((p) => p.name === bad.name);
    return spec ? describeParameter(spec) : bad.name;
  });
  const askFor = [...invalidSpecs, ...missingSpecs];
  if (askFor.length > 0) sentences.push(`To ${capability.name.toLowerCase()} I need ${joinWithAnd(askFor)}.`);

  if (uncertain.length > 0) {
    sentences.push(uncertainSentence(uncertain));
    sentences.push('Is that correct?');
  }

  const correctable = example(uncertain.slice(0, 1).map((value) => value.name));
  if (needed.length === 0) {
    sentences.push(`Reply "yes", or give the correct values (e.g. ${correctable}).`);
  } else if (uncertain.length === 0) {
    sentences.push(needed.length === 1 ? 'Reply with the value, or "cancel".' : `Reply with the values (e.g. ${example(needed)}), or "cancel".`);
  } else {
    sentences.push(
      `Reply with the missing values and "yes" to confirm the rest (e.g. yes, ${example(needed)}), ` + `or give the correct values (e.g. ${correctable}).`,
    );
  }
  return sentences.join(' ');
}

/**
 * The structured note for the LLM when a call cannot run yet: what is missing, what needs confirmation and what is
 * already known, so the model can word its own question when the engine lets it.
 */
export function describeForModel(pluginId: string, input: QuestionInput & { values: ResolvedValue[] }): string {
  const { capability, missing, invalid, uncertain, values } = input;
  const lines: string[] = [`Plugin "${pluginId}" (${capability.id}) was NOT invoked.`];
  if (missing.length > 0) {
    lines.push('Missing required parameters:');
    for (const p of missing) lines.push(`- ${describeParameter(p)}`);
  }
  if (invalid.length > 0) {
    lines.push('Invalid values:');
    for (const bad of invalid) lines.push(`- ${bad.name}: ${showValue(bad.value)} ${bad.reason}`);
  }
  if (uncertain.length > 0) {
    lines.push("Values that need the user's confirmation before use:");
    for (const value of uncertain) lines.push(`- ${value.name}: ${showValue(value.value)} (${sourcePhrase(value.source)})`);
  }
  const uncertainNames = new Set(uncertain.map((value) => value.name));
  const known = values.filter((value) => !uncertainNames.has(value.name));
  if (known.length > 0) {
    lines.push('Parameters we have:');
    for (const value of known) lines.push(`- ${value.name}: ${showValue(value.value)} (${sourcePhrase(value.source)})`);
  }
  lines.push(`Ask the user: ${buildQuestion(input)}`);
  return lines.join('\n');
}
