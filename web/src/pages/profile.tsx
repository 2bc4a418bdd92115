// A user's profile: the values the assistant fills parameters from (name, address, phone…). A user token
// edits its own; the admin picks any user.
import { useEffect, useState } from 'preact/hooks';
import { getJson, sendJson } from '../api.js';
import { ErrorNote } from '../components/badges.js';
import type { Whoami } from '../types.js';

type Value = string | number | boolean | null | object;
interface Row {
  key: string;
  text: string;
}

const KEY = /^[A-Za-z0-9_.-]{1,64}$/;

/** Strings stay strings; anything else was JSON and is shown as JSON. */
const toText = (value: Value): string => (typeof value === 'string' ? value : JSON.stringify(value));

export function ProfilePage(props: { who: Whoami }) {
  const own = props.who.kind === 'user' ? props.who.user_id : undefined;
  const [user, setUser] = useState(own ?? '');
  const [chosen, setChosen] = useState(own ?? '');
  const [users, setUsers] = useState<string[]>([]);
  const [rows, setRows] = useState<Row[] | undefined>(undefined);
  const [original, setOriginal] = useState<Record<string, Value>>({});
  const [error, setError] = useState<string | undefined>(undefined);
  const [saved, setSaved] = useState(false);

  useEffect(() => {
    if (own) return;
    void getJson<{ users: { user_id: string }[] }>('api/users')
      .then((answer) => setUsers(answer.users.map((u) => u.user_id)))
      .catch(() => setUsers([]));
  }, [own]);

  useEffect(() => {
    setRows(undefined);
    setSaved(false);
    if (!chosen) return;
    void getJson<{ profile: Record<string, Value> }>(`api/profiles/${encodeURIComponent(chosen)}`)
      .then((answer) => {
        setOriginal(answer.profile);
        setRows(Object.entries(answer.profile).map(([key, value]) => ({ key, text: toText(value) })));
        setError(undefined);
      })
      .catch((err: Error) => setError(`Could not load the profile: ${err.message}`));
  }, [chosen]);

  const save = async (event: Event): Promise<void> => {
    event.preventDefault();
    if (!rows) return;
    const profile: Record<string, Value> = {};
    for (const row of rows) {
      const key = row.key.trim();
      if (!key) continue;
      if (!KEY.test(key)) return setError(`"${key}" is not a valid key (letters, digits, _ . - only).`);
      // A value that was not a string keeps its type when it still reads as JSON.
      const before = original[key];
      let value: Value = row.text;
      if (before !== undefined && typeof before !== 'string') {
        try {
          value = JSON.parse(row.text) as Value;
        } catch {
          value = row.text;
        }
      }
      profile[key] = value;
    }
    try {
      const answer = await sendJson<{ profile: Record<string, Value> }>('PUT', `api/profiles/${encodeURIComponent(chosen)}`, { profile });
      setOriginal(answer.profile);
      setRows(Object.entries(answer.profile).map(([key, value]) => ({ key, text: toText(value) })));
      setError(undefined);
      setSaved(true);
    } catch (err) {
      setError(`Not saved: ${(err as Error).message}`);
    }
  };

  const update = (index: number, change: Partial<Row>): void => {
    setSaved(false);
    setRows((previous) => previous?.map((row, i) => (i === index ? { ...row, ...change } : row)));
  };

  return (
    <section>
      <div class="page-head">
        <div>
          <h1>{own ? 'My profile' : 'Profiles'}</h1>
          <p class="muted">
            What the assistant knows about {own ? 'you' : 'a person'}: used to fill in parameters such as a delivery address, always confirmed before use.
          </p>
        </div>
      </div>
      {own ? null : (
        <form
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            setChosen(user.trim());
          }}
        >
          <input
            list="known-users"
            placeholder="User id, e.g. alice"
            aria-label="User id"
            value={user}
            onInput={(e) => setUser((e.target as HTMLInputElement).value)}
          />
          <datalist id="known-users">
            {users.map((u) => (
              <option key={u} value={u} />
            ))}
          </datalist>
          <button type="submit">Open</button>
        </form>
      )}
      <ErrorNote error={error} />
      {rows ? (
        <form class="card profile" onSubmit={(e) => void save(e)} aria-label={`Profile of ${chosen}`}>
          <h2 class="mono">{chosen}</h2>
          {rows.length === 0 ? <p class="muted">No values yet.</p> : null}
          {rows.map((row, index) => (
            <div class="profile-row" key={index}>
              <input
                class="mono"
                aria-label="Key"
                placeholder="key"
                value={row.key}
                onInput={(e) => update(index, { key: (e.target as HTMLInputElement).value })}
              />
              <input
                aria-label={`Value of ${row.key || 'new key'}`}
                placeholder="value"
                value={row.text}
                onInput={(e) => update(index, { text: (e.target as HTMLInputElement).value })}
              />
              <button type="button" class="link" onClick={() => setRows(rows.filter((_, i) => i !== index))} aria-label={`Remove ${row.key}`}>
                Remove
              </button>
            </div>
          ))}
          <div class="actions">
            <button type="button" onClick={() => setRows([...rows, { key: '', text: '' }])}>
              Add a value
            </button>
            <button type="submit" class="primary">
              Save
            </button>
            {saved ? <span class="saved">Saved.</span> : null}
          </div>
        </form>
      ) : chosen && !error ? (
        <p class="muted">Loading…</p>
      ) : null}
    </section>
  );
}
