// Who is calling, resolved once per HTTP request from its bearer token, so every front door (the HTTP
// API, /mcp, later an OpenAI-compatible endpoint or a dashboard) asks the same question the same way.
// An identity always comes from a credential, never from a payload.

/** The admin token may act for anyone; a user token acts only as its user. */
export type Principal = { kind: 'admin' } | { kind: 'user'; user_id: string };

export const ADMIN: Principal = { kind: 'admin' };

export function userPrincipal(userId: string): Principal {
  return { kind: 'user', user_id: userId };
}

/** The user a principal may speak as: any (undefined) for the admin, exactly one for a user token. */
export function ownUser(principal: Principal): string | undefined {
  return principal.kind === 'user' ? principal.user_id : undefined;
}

/** True when the principal may act as this user. */
export function mayActAs(principal: Principal, userId: string): boolean {
  return principal.kind === 'admin' || principal.user_id === userId;
}

export function describePrincipal(principal: Principal): string {
  return principal.kind === 'admin' ? 'the admin token' : `the token of user "${principal.user_id}"`;
}
