// Who a channel may speak for. An identity comes from a credential, never from a payload: a message on
// channels/<ch>/in names a user_id, and this decides whether the client that sent it may speak as them.
//
// Embedded broker (the Core knows who published):
// - an admin credential may speak as anyone;
// - a channel credential only as its users (default: the user named like the credential);
// - an anonymous client (only possible in loopback mode, or when the operator allowed it) as anyone,
//   unless access.channels.<ch>.users binds that channel.
// External broker (the Core cannot see who published): the broker ACL lets only the login named like the
// channel publish on channels/<ch>/in, and the channel speaks for access.channels.<ch>.users plus the
// users of channel credentials of that channel; with neither, only as the user named like the channel.
import type { PublisherIdentity } from '../bus/core-bus.js';

export type SpeakerDecision = { allowed: true } | { allowed: false; reason: string };

export interface SpeakerInput {
  channel: string;
  user_id: string;
  /** Undefined with an external broker. */
  publisher?: PublisherIdentity;
}

export interface ChannelBindingsDeps {
  /** True when the broker is embedded, so publishers are known. */
  embedded: boolean;
  /** access.channels from the config. */
  configured: Record<string, { users: string[] }>;
  /** Users of the channel credentials acting for a channel (the credential store). */
  credentialUsers: (channel: string) => string[];
  /**
   * Users the channel credentials of a channel speak for, each defaulting to the user named like the
   * credential; empty when no channel credential acts for it. Decides who may be written to there.
   */
  boundUsers?: (channel: string) => string[];
}

const ANYONE = '*';

function quoteList(users: readonly string[]): string {
  return users.map((user) => JSON.stringify(user)).join(', ');
}

function permits(users: readonly string[], userId: string): boolean {
  return users.includes(ANYONE) || users.includes(userId);
}

export class ChannelBindings {
  constructor(private readonly deps: ChannelBindingsDeps) {}

  authorize(input: SpeakerInput): SpeakerDecision {
    return this.deps.embedded ? this.embedded(input) : this.external(input);
  }

  /**
   * Whether a message for a user may go out on a channel's `out` topic. A channel bound to users
   * (access.channels.<ch>.users, or channel credentials acting for it) is somebody's device: only their
   * messages go there, so nobody can write into another user's tablet by naming it. An unbound channel
   * (the dashboard's "web", a shared display) carries anyone's.
   */
  mayCarry(channel: string, userId: string): SpeakerDecision {
    const users = [...(this.deps.configured[channel]?.users ?? []), ...(this.deps.boundUsers?.(channel) ?? [])];
    if (users.length === 0 || permits(users, userId)) return { allowed: true };
    return {
      allowed: false,
      reason: `channel "${channel}" carries messages only for ${quoteList([...new Set(users)])}, not for "${userId}"`,
    };
  }

  /** The users a channel may speak for with an external broker (what /api/status and the docs show). */
  externalBinding(channel: string): { users: string[]; source: string } {
    const configured = this.deps.configured[channel]?.users ?? [];
    const fromCredentials = this.deps.credentialUsers(channel);
    if (configured.length === 0 && fromCredentials.length === 0) return { users: [channel], source: 'the default: the user named like the channel' };
    const sources = [configured.length > 0 ? `access.channels.${channel}.users` : '', fromCredentials.length > 0 ? `credential ${channel}` : ''].filter(
      Boolean,
    );
    return { users: [...new Set([...configured, ...fromCredentials])], source: sources.join(' and ') };
  }

  private embedded({ channel, user_id, publisher }: SpeakerInput): SpeakerDecision {
    if (publisher?.role === 'admin') return { allowed: true };
    if (publisher?.role === 'channel' && publisher.username) {
      const users = publisher.users ?? [publisher.username];
      if (permits(users, user_id)) return { allowed: true };
      return {
        allowed: false,
        reason:
          `the channel login "${publisher.username}" may speak only as ${quoteList(users)}, not as "${user_id}"; ` +
          `bind more users with: homeclaw credentials add ${publisher.username} --role channel --users ...`,
      };
    }
    if (publisher?.role !== undefined) return { allowed: false, reason: `a ${publisher.role} login may not send user messages` };
    const configured = this.deps.configured[channel]?.users;
    if (configured && !permits(configured, user_id)) {
      return {
        allowed: false,
        reason: `channel "${channel}" may speak only as ${quoteList(configured)} (access.channels.${channel}.users), not as "${user_id}"`,
      };
    }
    return { allowed: true };
  }

  private external({ channel, user_id }: SpeakerInput): SpeakerDecision {
    const binding = this.externalBinding(channel);
    if (permits(binding.users, user_id)) return { allowed: true };
    return {
      allowed: false,
      reason:
        `channel "${channel}" may speak only as ${quoteList(binding.users)} (${binding.source}), not as "${user_id}"; ` +
        `bind users in access.channels.${channel}.users`,
    };
  }
}
