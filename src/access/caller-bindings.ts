// Who a call on the MQTT front door (homeclaw/call/<plugin>/<capability>) is made for. An identity comes
// from a credential, never from a payload: the call's user_id is only a request to act as that user, and
// this decides whether the client that published it may.
//
// Every caller has a binding, the users it may act as ("*": anyone):
// - embedded broker, caller login: its --users (default: the user named like the login);
// - embedded broker, admin login: anyone;
// - embedded broker, anonymous client (loopback mode, or when the operator allowed anonymous clients):
//   access.callers.users, else anyone;
// - external broker (the Core cannot see who published, and all callers share one topic tree):
//   access.callers.users, else only "household".
// A call naming a user outside the binding is refused. A call without user_id acts as the binding's only
// user; with "*" it runs without a user (like the admin token: no per-user policy applies); a binding of
// several users cannot guess which one is meant, so such a call is refused. No binding ever lets a call
// escape its users' policy by leaving user_id out.
import type { PublisherIdentity } from '../bus/core-bus.js';

export type CallerDecision = { allowed: true; user_id?: string } | { allowed: false; reason: string };

export interface CallerInput {
  /** The user_id of the call, if any. */
  user_id?: string;
  /** Undefined with an external broker. */
  publisher?: PublisherIdentity;
}

export interface CallerBindingsDeps {
  /** True when the broker is embedded, so publishers are known. */
  embedded: boolean;
  /** access.callers.users from the config; null when not set. */
  configured: readonly string[] | null;
}

/** Who external-broker callers act as when access.callers.users is not set. */
export const EXTERNAL_CALLER_DEFAULT_USER = 'household';
const ANYONE = '*';

interface Binding {
  users: readonly string[];
  /** Who the binding belongs to, for messages. */
  who: string;
  /** How to change it, for messages. */
  hint: string;
}

function quoteList(users: readonly string[]): string {
  return users.map((user) => JSON.stringify(user)).join(', ');
}

export class CallerBindings {
  constructor(private readonly deps: CallerBindingsDeps) {}

  decide(input: CallerInput): CallerDecision {
    const binding = this.bindingOf(input.publisher);
    if (!binding) return { allowed: false, reason: `a ${input.publisher?.role ?? 'unknown'} login may not call plugins` };
    const anyone = binding.users.includes(ANYONE);
    if (input.user_id !== undefined) {
      if (anyone || binding.users.includes(input.user_id)) return { allowed: true, user_id: input.user_id };
      return { allowed: false, reason: `${binding.who} may act only as ${quoteList(binding.users)}, not as "${input.user_id}"; ${binding.hint}` };
    }
    if (anyone) return { allowed: true };
    if (binding.users.length === 1) return { allowed: true, user_id: binding.users[0] as string };
    return { allowed: false, reason: `${binding.who} acts for several users (${quoteList(binding.users)}): name one of them in user_id` };
  }

  /** The users callers on an external broker may act as (what /api/status and the docs show). */
  externalUsers(): readonly string[] {
    return this.deps.configured ?? [EXTERNAL_CALLER_DEFAULT_USER];
  }

  private bindingOf(publisher: PublisherIdentity | undefined): Binding | undefined {
    const configHint = 'bind users in access.callers.users';
    if (!this.deps.embedded) {
      return { users: this.externalUsers(), who: 'callers on the external broker', hint: configHint };
    }
    if (publisher?.role === 'admin') return { users: [ANYONE], who: 'an admin login', hint: '' };
    if (publisher?.role === 'caller' && publisher.username) {
      const name = publisher.username;
      return {
        users: publisher.users ?? [name],
        who: `the caller login "${name}"`,
        hint: `bind users when creating the login: homeclaw credentials add ${name} --role caller --users ...`,
      };
    }
    if (publisher?.role === undefined) return { users: this.deps.configured ?? [ANYONE], who: 'anonymous callers', hint: configHint };
    return undefined;
  }
}
