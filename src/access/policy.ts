// Per-user policy: which plugins and capabilities each user may reach, and which capabilities always
// need the user's confirmation. One object answers for every path (the dispatcher's pre-invoke check,
// the conversation before it starts a dialogue, retrieval and MCP listings), so they cannot disagree.
//
// Rules, per user (their own entry under policy.users, else policy.default, else no restriction):
// - allow given: only matching capabilities are reachable (allow: [] reaches nothing);
// - deny given: matching capabilities are not reachable, whatever allow says (deny wins);
// - neither: everything is reachable.
// Calls without a user (the admin token, the CLI) are not subject to any user's policy.
import type { PolicyConfig, PolicyRule } from '../config/types.js';
import type { InvocationGuard, InvocationRefusal } from '../dispatch/dispatcher-api.js';
import type { CapabilitySpec } from '../protocol/types.js';
import { compileGlob, firstMatch, type CompiledGlob } from './policy-globs.js';

interface CompiledRule {
  /** Where the rule comes from, for messages: policy.users.kid or policy.default. */
  origin: string;
  allow?: CompiledGlob[];
  deny: CompiledGlob[];
}

export type PolicyDecision = { allowed: true } | { allowed: false; reason: string };

/** The plugin as the policy needs it: its id and capabilities. */
export interface PolicyPlugin {
  descriptor: { id: string; capabilities: Pick<CapabilitySpec, 'id'>[] };
}

export interface PolicySummary {
  users: string[];
  has_default: boolean;
  require_confirmation: string[];
}

function compileRule(origin: string, rule: PolicyRule): CompiledRule {
  return {
    origin,
    ...(rule.allow ? { allow: rule.allow.map(compileGlob) } : {}),
    deny: (rule.deny ?? []).map(compileGlob),
  };
}

export class AccessPolicy implements InvocationGuard {
  private readonly users = new Map<string, CompiledRule>();
  private readonly fallback: CompiledRule | undefined;
  private readonly confirm: CompiledGlob[];

  /** Throws an Error naming the bad pattern (the config schema normally catches it first). */
  constructor(private readonly config: PolicyConfig = { users: {}, require_confirmation: [] }) {
    for (const [user, rule] of Object.entries(config.users)) this.users.set(user, compileRule(`policy.users.${user}`, rule));
    this.fallback = config.default ? compileRule('policy.default', config.default) : undefined;
    this.confirm = config.require_confirmation.map(compileGlob);
  }

  decide(userId: string | undefined, pluginId: string, capabilityId: string): PolicyDecision {
    if (userId === undefined) return { allowed: true };
    const rule = this.users.get(userId) ?? this.fallback;
    if (!rule) return { allowed: true };
    const target = `${pluginId}.${capabilityId}`;
    const denied = firstMatch(rule.deny, pluginId, capabilityId);
    if (denied) return { allowed: false, reason: `user "${userId}" is not allowed to use ${target} (${rule.origin}.deny: ${denied.source})` };
    if (rule.allow && !firstMatch(rule.allow, pluginId, capabilityId)) {
      return { allowed: false, reason: `user "${userId}" is not allowed to use ${target} (not in ${rule.origin}.allow)` };
    }
    return { allowed: true };
  }

  /** True when the user may reach at least one capability of the plugin (what retrieval may offer). */
  mayReachPlugin(userId: string | undefined, plugin: PolicyPlugin): boolean {
    return plugin.descriptor.capabilities.some((capability) => this.decide(userId, plugin.descriptor.id, capability.id).allowed);
  }

  /** The capability flags itself, or the operator's policy.require_confirmation names it. */
  requiresConfirmation(pluginId: string, capability: Pick<CapabilitySpec, 'id' | 'requires_confirmation'>): boolean {
    return capability.requires_confirmation === true || firstMatch(this.confirm, pluginId, capability.id) !== undefined;
  }

  check(input: { plugin_id: string; capability: CapabilitySpec; user_id?: string; confirmed: boolean }): InvocationRefusal | undefined {
    const decision = this.decide(input.user_id, input.plugin_id, input.capability.id);
    if (!decision.allowed) return { code: 'forbidden', message: decision.reason };
    if (!input.confirmed && this.requiresConfirmation(input.plugin_id, input.capability)) {
      return {
        code: 'confirmation_required',
        message: `${input.plugin_id}.${input.capability.id} requires confirmation: ask the user, then call again with "confirmed": true`,
      };
    }
    return undefined;
  }

  summary(): PolicySummary {
    return {
      users: Object.keys(this.config.users).sort(),
      has_default: this.fallback !== undefined,
      require_confirmation: [...this.config.require_confirmation],
    };
  }
}
