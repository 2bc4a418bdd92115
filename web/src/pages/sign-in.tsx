// Sign-in with the admin token or a user token. The field is a password field (not shown, not saved by
// the browser's form history) and the token never goes into the URL.
import { useState } from 'preact/hooks';
import { ErrorNote } from '../components/badges.js';
import { signIn, type Session } from '../session.js';

export function SignInPage(props: { onSignedIn: (session: Session) => void; notice?: string | undefined }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    const result = await signIn(token);
    setBusy(false);
    if (result.ok) props.onSignedIn(result.session);
    else setError(result.message);
  };

  return (
    <main class="sign-in">
      <form class="card sign-in-card" onSubmit={(event) => void submit(event)} autocomplete="off">
        <div class="brand large">
          <span class="logo" aria-hidden="true" />
          HomeClaw
        </div>
        <p class="muted">Sign in with the admin token or your user token.</p>
        {props.notice ? <p class="notice">{props.notice}</p> : null}
        <label for="token">Token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="off"
          spellcheck={false}
          value={token}
          onInput={(event) => setToken((event.target as HTMLInputElement).value)}
          autofocus
        />
        <ErrorNote error={error} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <details class="hint">
          <summary>Where do I find a token?</summary>
          <p>
            The admin token is in <code>&lt;data dir&gt;/admin.token</code> (or <code>HOMECLAW_ADMIN_TOKEN</code>). A person gets their own token with{' '}
            <code>homeclaw users add &lt;name&gt;</code>: it can chat, search and edit its own profile.
          </p>
        </details>
      </form>
    </main>
  );
}
