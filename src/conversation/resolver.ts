// The parameter resolver: fills each parameter from the best
// source, coerces it to the capability schema, and refuses to run a call whose values are missing,
// invalid, or taken from a profile/config the user has not confirmed. Pure and synchronous: everything
// it needs (profile, system context, confirmations) is in its input, so every decision is unit-testable.
//
// Decisions on purpose:
// - user_id and channel system values always win over explicit ones: identity is never something a
//   message (or a model) may claim. Other system keys follow the normal order (explicit first), so
//   "weather in Paris" can override the request's location.
// - use_defaults_directly / use_default_directly_for trust CONFIG values only: the plugin's owner set them.
//   A profile value
//   with confirm_if_uncertain is confirmed with the user unless its name is in `confirmed`.
// - A parameter's own manifest `default` and system values are never "uncertain": they are not the
//   user's personal data and cannot be stale.
// - Explicit keys that are not parameters of the capability are dropped, so a model's invented
//   argument never reaches a plugin.
import { configIsTrusted, configValue, isBlank } from '../dispatch/parameter-defaults.js';
import type { CapabilitySpec, JsonObject, JsonValue, ParameterSpec, PluginConfig, SystemKey } from '../protocol/types.js';
import type { PluginRecord } from '../registry/record.js';
import { ValueCoercer } from './coerce.js';
import { buildQuestion } from './questions.js';
import type { InvalidValue, ParameterResolver, Profile, ResolvedValue, ResolveInput, ResolveOutcome, SystemContext, ValueSource } from './resolver-api.js';

/** System keys that describe who is asking: never taken from the message. */
const IDENTITY_KEYS: ReadonlySet<SystemKey> = new Set(['user_id', 'channel']);
/**
 * System keys the Core always knows; parameters bound to them are hidden from the LLM. location is not
 * here: a request may not carry one, and the user may name a place ("weather in Paris").
 */
const ALWAYS_KNOWN_SYSTEM_KEYS: ReadonlySet<SystemKey> = new Set(['datetime', 'date', 'time', 'timezone', 'user_id', 'channel']);

function own(object: JsonObject | Profile | undefined, key: string | undefined): JsonValue | undefined {
  if (!object || key === undefined || !Object.hasOwn(object, key)) return undefined;
  return object[key];
}

function systemValue(system: SystemContext, key: SystemKey): JsonValue | undefined {
  const value = system[key];
  return value === undefined ? undefined : value;
}

interface Candidate {
  value: JsonValue;
  source: ValueSource;
}

export interface DefaultParameterResolverOptions {
  coercer?: ValueCoercer;
}

export class DefaultParameterResolver implements ParameterResolver {
  private readonly coercer: ValueCoercer;

  constructor(options: DefaultParameterResolverOptions = {}) {
    this.coercer = options.coercer ?? new ValueCoercer();
  }

  resolve(input: ResolveInput): ResolveOutcome {
    const { record, capability } = input;
    const config = record.descriptor.config ?? {};
    const confirmed = new Set(input.confirmed ?? []);
    const values: ResolvedValue[] = [];
    const missing: ParameterSpec[] = [];
    const invalid: InvalidValue[] = [];
    const uncertain: ResolvedValue[] = [];
    const parameters: JsonObject = {};

    for (const parameter of capability.parameters) {
      const candidate = this.pick(input, config, parameter, confirmed);
      if (!candidate) {
        if (parameter.required) missing.push(parameter);
        continue;
      }
      const coerced = this.coercer.coerce(capability, parameter.name, candidate.value);
      if (!coerced.ok) {
        invalid.push({ name: parameter.name, value: candidate.value, reason: coerced.reason });
        continue;
      }
      const resolved: ResolvedValue = { name: parameter.name, value: coerced.value, source: candidate.source };
      values.push(resolved);
      parameters[parameter.name] = coerced.value;
      if (this.needsConfirmation(config, parameter, candidate.source)) uncertain.push(resolved);
    }

    if (missing.length === 0 && invalid.length === 0 && uncertain.length === 0) {
      return { status: 'ready', parameters, values };
    }
    const question = buildQuestion({ capability, missing, invalid, uncertain });
    return { status: 'ask', missing, invalid, uncertain, values, question };
  }

  llmVisibleParameters(record: PluginRecord, capability: CapabilitySpec): ParameterSpec[] {
    const config = record.descriptor.config ?? {};
    return capability.parameters.filter((parameter) => {
      if (parameter.system_key && ALWAYS_KNOWN_SYSTEM_KEYS.has(parameter.system_key)) return false;
      const trustedConfig = configIsTrusted(config, parameter.name) && configValue(config, capability.id, parameter) !== undefined;
      return !trustedConfig;
    });
  }

  private pick(input: ResolveInput, config: PluginConfig, parameter: ParameterSpec, confirmed: ReadonlySet<string>): Candidate | undefined {
    const { system_key: systemKey, profile_key: profileKey } = parameter;
    if (systemKey && IDENTITY_KEYS.has(systemKey)) {
      const value = systemValue(input.system, systemKey);
      if (!isBlank(value)) return { value, source: 'system' };
    }
    const explicit = own(input.explicit, parameter.name);
    if (!isBlank(explicit)) return { value: explicit, source: 'explicit' };

    if (systemKey) {
      const value = systemValue(input.system, systemKey);
      if (!isBlank(value)) return { value, source: 'system' };
    }
    // A confirmed profile/config value is reported as 'confirmed' so the source tells why it was not asked.
    const personal = (source: 'profile' | 'config'): ValueSource => (parameter.confirm_if_uncertain && confirmed.has(parameter.name) ? 'confirmed' : source);
    const fromProfile = own(input.profile, profileKey);
    if (!isBlank(fromProfile)) return { value: fromProfile, source: personal('profile') };

    const fromConfig = configValue(config, input.capability.id, parameter);
    if (fromConfig !== undefined) return { value: fromConfig, source: personal('config') };

    if (!isBlank(parameter.default)) return { value: parameter.default, source: 'default' };
    return undefined;
  }

  private needsConfirmation(config: PluginConfig, parameter: ParameterSpec, source: ValueSource): boolean {
    if (!parameter.confirm_if_uncertain) return false;
    if (source === 'profile') return true;
    if (source === 'config') return !configIsTrusted(config, parameter.name);
    return false;
  }
}
