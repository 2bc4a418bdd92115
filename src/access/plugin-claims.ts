// Who may take over a plugin id that another client registered.
//
// An id first registered by an anonymous client (loopback development mode) is owned by that client's
// MQTT client id, which nothing ties to a person. Once the Core requires credentials, the plugin logs in
// with a plugin credential; if that credential lists the id in its plugin_ids, it claims the id (the
// anonymous owner cannot come back: anonymous clients are refused, and a credentialed owner is never
// displaced this way). Ids owned by another credential move only by an admin's
// `homeclaw plugins transfer <id> <credential>`.
import type { PublisherIdentity } from '../bus/core-bus.js';

const ANONYMOUS_OWNER_PREFIX = 'mqtt:client:';

export function isAnonymousOwner(owner: string): boolean {
  return owner.startsWith(ANONYMOUS_OWNER_PREFIX);
}

export function mayClaimPluginId(existingOwner: string, publisher: PublisherIdentity | undefined, pluginId: string): boolean {
  return (
    isAnonymousOwner(existingOwner) &&
    publisher?.role === 'plugin' &&
    publisher.username !== undefined &&
    (publisher.pluginIds ?? []).includes(pluginId)
  );
}

/** The owner string of a credential, as the registry records MQTT owners. */
export function credentialOwner(credentialName: string): string {
  return `mqtt:user:${credentialName}`;
}
