// Recent invocations from the audit log (who called what, through which channel, how it ended, how long
// it took), filtered by user, plugin or outcome, and loaded again whenever the event feed reports one.
import { useEffect, useRef, useState } from 'preact/hooks';
import { getJson } from '../api.js';
import { ErrorNote, OutcomeBadge } from '../components/badges.js';
import { clockTime, duration } from '../format.js';
import type { LiveFeed } from '../live-feed.js';
import { href } from '../router.js';
import { serialLoader } from '../serial-loader.js';
import type { AuditEntry } from '../types.js';

const OUTCOMES = [
  'ok',
  'plugin_error',
  'timeout',
  'invalid_params',
  'forbidden',
  'confirmation_required',
  'not_found',
  'offline',
  'stale',
  'busy',
  'adapter_error',
  'cancelled',
];

interface Filters {
  user: string;
  plugin: string;
  outcome: string;
}

export function InvocationsPage(props: { feed: LiveFeed }) {
  const [entries, setEntries] = useState<AuditEntry[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [filters, setFilters] = useState<Filters>({ user: '', plugin: '', outcome: '' });
  const current = useRef(filters);
  current.current = filters;
  const loader = useRef<(() => void) | undefined>(undefined);

  useEffect(() => {
    const load = serialLoader(async () => {
      const query = new URLSearchParams({ limit: '100' });
      for (const [key, value] of Object.entries(current.current)) if (value.trim()) query.set(key, value.trim());
      try {
        const answer = await getJson<{ entries: AuditEntry[] }>(`api/audit?${query.toString()}`);
        setEntries(answer.entries);
        setError(undefined);
      } catch (err) {
        setError(`Could not load the audit log: ${(err as Error).message}`);
      }
    });
    loader.current = load;
    load();
    const offReady = props.feed.onReady(load);
    const offEvent = props.feed.onEvent((kind) => {
      if (kind === 'invocation') load();
    });
    return () => {
      offReady();
      offEvent();
    };
  }, [props.feed]);

  const set = (key: keyof Filters) => (event: Event) => {
    setFilters({ ...filters, [key]: (event.target as HTMLInputElement).value });
  };
  useEffect(() => loader.current?.(), [filters]);

  return (
    <section>
      <div class="page-head">
        <div>
          <h1>Recent invocations</h1>
          <p class="muted">From the audit log, newest first: every call, run or refused. Parameter values are never recorded.</p>
        </div>
      </div>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <input type="search" placeholder="User" aria-label="Filter by user" value={filters.user} onChange={set('user')} />
        <input type="search" placeholder="Plugin id" aria-label="Filter by plugin" value={filters.plugin} onChange={set('plugin')} />
        <select aria-label="Filter by outcome" value={filters.outcome} onChange={set('outcome')}>
          <option value="">Any outcome</option>
          {OUTCOMES.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </form>
      <ErrorNote error={error} />
      <div class="table-wrap">
        <table class="invocations" aria-label="Recent invocations">
          <thead>
            <tr>
              <th>Time</th>
              <th>User</th>
              <th>Channel</th>
              <th>Plugin</th>
              <th>Capability</th>
              <th>Outcome</th>
              <th class="num">Duration</th>
            </tr>
          </thead>
          <tbody>
            {(entries ?? []).map((e) => (
              <tr key={e.id} data-entry={e.id}>
                <td class="nowrap">{clockTime(e.ts)}</td>
                <td>
                  {e.user_id ?? (
                    <span class="muted" title="the admin token or the CLI">
                      admin
                    </span>
                  )}
                </td>
                <td>{e.channel ?? <span class="muted">—</span>}</td>
                <td>
                  <a href={href(`plugins/${encodeURIComponent(e.plugin_id)}`)} class="mono">
                    {e.plugin_id}
                  </a>
                </td>
                <td class="mono">{e.capability_id}</td>
                <td>
                  <OutcomeBadge outcome={e.outcome} />
                </td>
                <td class="num">{duration(e.duration_ms)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {entries?.length === 0 ? (
          <p class="empty">No invocation recorded{filters.user || filters.plugin || filters.outcome ? ' for these filters' : ' yet'}.</p>
        ) : null}
        {entries === undefined && !error ? <p class="muted">Loading…</p> : null}
      </div>
    </section>
  );
}
