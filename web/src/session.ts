// Who is signed in. The token is kept in sessionStorage: it survives a reload of the tab, is gone when
// the tab closes, and is never put in a URL. Under Home Assistant ingress no token is needed: the Core
// trusts Home Assistant's session for requests that come through its Supervisor.
import { probe, setApiToken } from './api.js';
import type { Whoami } from './types.js';

const TOKEN_KEY = 'homeclaw.token';

export interface Session {
  who: Whoami;
  /** undefined under ingress. */
  token?: string;
}

export type SignInResult = { ok: true; session: Session } | { ok: false; message: string };

function store(): Storage | undefined {
  try {
    return sessionStorage;
  } catch {
    return undefined;
  }
}

/** Home Assistant serves every ingress panel under /api/hassio_ingress/<token>/. */
export function underIngress(path = location.pathname): boolean {
  return /\/api\/hassio_ingress\/[^/]+\//.test(path);
}

export async function signIn(token: string): Promise<SignInResult> {
  const candidate = token.trim();
  if (candidate === '') return { ok: false, message: 'Enter a token.' };
  let answer: Awaited<ReturnType<typeof probe<Whoami>>>;
  try {
    answer = await probe<Whoami>('api/whoami', candidate);
  } catch {
    return { ok: false, message: 'The Core did not answer. Is it running?' };
  }
  if (answer.status === 401) return { ok: false, message: 'This token was not accepted.' };
  if (!answer.body) return { ok: false, message: answer.message ?? `The Core answered ${answer.status}.` };
  store()?.setItem(TOKEN_KEY, candidate);
  setApiToken(candidate);
  return { ok: true, session: { who: answer.body, token: candidate } };
}

export interface Restored {
  session?: Session;
  /** Why Home Assistant's session did not open the dashboard, under ingress. */
  notice?: string;
}

/** Pauses between tries at Home Assistant's session: about 15 s in all. */
const INGRESS_RETRY_MS = [500, 1000, 2000, 4000, 8000];

/** The session of this tab, if its token still works, or Home Assistant's under ingress. */
export async function restoreSession(): Promise<Restored> {
  const saved = store()?.getItem(TOKEN_KEY) ?? undefined;
  if (saved) {
    const restored = await signIn(saved).catch(() => undefined);
    if (restored?.ok) return { session: restored.session };
    store()?.removeItem(TOKEN_KEY);
  }
  return underIngress() ? ingressSession() : {};
}

/**
 * Home Assistant's session through its Supervisor. A network error or a 5xx (the Supervisor answers 502
 * while the Core restarts) says nothing about who the person is, so it is tried again; the sign-in form
 * is the last resort, since a person who came through Home Assistant has no token to type.
 */
async function ingressSession(): Promise<Restored> {
  for (let attempt = 0; ; attempt++) {
    const answer = await probe<Whoami>('api/whoami', undefined).catch(() => undefined);
    if (answer?.body) return { session: { who: answer.body } };
    if (answer && answer.status < 500)
      return { notice: "The Core did not accept Home Assistant's session (is dashboard.ingress_proxy the Supervisor's address?). Sign in with a token." };
    const pause = INGRESS_RETRY_MS[attempt];
    if (pause === undefined) return { notice: 'The Core did not answer through Home Assistant. Reload the page to try again, or sign in with a token.' };
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

export function signOut(): void {
  store()?.removeItem(TOKEN_KEY);
  setApiToken(undefined);
}

/** The signed-in name beside the role, when there is one: the user, or Home Assistant's user under ingress. */
export function describe(who: Whoami): string | undefined {
  if (who.kind === 'user') return who.user_id;
  if (who.via === 'ingress') return who.ingress_display_name ?? who.ingress_user ?? 'Home Assistant';
  return undefined;
}
