// Every plugin with its type, state and last outcome, kept current by the event feed: registrations,
// updates and removals reload the list, health changes and invocations update their row in place.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { getJson } from '../api.js';
import { ErrorNote, OutcomeBadge, StateBadge } from '../components/badges.js';
import { ago, duration, outcomeOf } from '../format.js';
import type { LiveFeed } from '../live-feed.js';
import { href } from '../router.js';
import { serialLoader } from '../serial-loader.js';
import type { AuditEntry, PluginSummary } from '../types.js';

interface LastOutcome {
  outcome: string;
  ts: number;
  duration_ms: number;
  capability_id: string;
  user_id?: string | null;
}

/** The newer of two outcomes (a loaded audit entry and a live event may describe different calls). */
function newer(a: LastOutcome | undefined, b: LastOutcome | undefined): LastOutcome | undefined {
  if (!a) return b;
  if (!b) return a;
  return b.ts >= a.ts ? b : a;
}

export function PluginsPage(props: { feed: LiveFeed }) {
  const [plugins, setPlugins] = useState<PluginSummary[] | undefined>(undefined);
  const [loaded, setLoaded] = useState<Map<string, LastOutcome>>(new Map());
  const [live, setLive] = useState<Map<string, LastOutcome>>(new Map());
  const [flash, setFlash] = useState<Map<string, number>>(new Map());
  const [error, setError] = useState<string | undefined>(undefined);
  const [filter, setFilter] = useState('');
  const [, tick] = useState(0);

  useEffect(() => {
    const loadPlugins = serialLoader(async () => {
      try {
        setPlugins((await getJson<{ plugins: PluginSummary[] }>('api/plugins')).plugins);
        setError(undefined);
      } catch (err) {
        setError(`Could not load the plugins: ${(err as Error).message}`);
      }
    });
    const loadOutcomes = serialLoader(async () => {
      const last = await getJson<{ entries: AuditEntry[] }>('api/audit/last');
      setLoaded(
        new Map(
          last.entries.map((e) => [
            e.plugin_id,
            { outcome: e.outcome, ts: e.ts, duration_ms: e.duration_ms, capability_id: e.capability_id, user_id: e.user_id },
          ]),
        ),
      );
    });
    const load = (): void => {
      loadPlugins();
      loadOutcomes();
    };
    const touched = (id: string): void => setFlash((previous) => new Map(previous).set(id, Date.now()));
    load();
    const offReady = props.feed.onReady(load);
    const offEvent = props.feed.onEvent((kind, event) => {
      const id = event.plugin_id;
      if (!id) return;
      if (kind === 'registry') {
        if (event.type === 'plugin.health' && event.state) {
          const state = event.state;
          setPlugins((list) =>
            list?.map((p) => (p.id === id ? { ...p, state, ...(event.reason ? { state_reason: event.reason } : { state_reason: undefined }) } : p)),
          );
        }
        // Registrations, updates and removals change more than a row: the list is loaded again (a health
        // change too, in case it raced a load that was already under way).
        loadPlugins();
        touched(id);
      } else if (kind === 'invocation') {
        const outcome: LastOutcome = {
          outcome: outcomeOf(event),
          ts: event.ts ?? Date.now(),
          duration_ms: event.duration_ms ?? 0,
          capability_id: event.capability_id ?? '',
        };
        setLive((previous) => new Map(previous).set(id, outcome));
        touched(id);
      }
    });
    // "2 min ago" stays true without a reload.
    const clock = setInterval(() => tick((n) => n + 1), 15_000);
    return () => {
      offReady();
      offEvent();
      clearInterval(clock);
    };
  }, [props.feed]);

  const rows = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    return (plugins ?? [])
      .filter((p) => !needle || `${p.id} ${p.name} ${p.type} ${p.state}`.toLowerCase().includes(needle))
      .sort((a, b) => a.id.localeCompare(b.id));
  }, [plugins, filter]);

  const counts = useMemo(() => {
    const out: Record<string, number> = {};
    for (const p of plugins ?? []) out[p.state] = (out[p.state] ?? 0) + 1;
    return out;
  }, [plugins]);

  return (
    <section>
      <div class="page-head">
        <div>
          <h1>Plugins</h1>
          <p class="muted" data-testid="plugin-counts">
            {plugins === undefined
              ? 'Loading…'
              : `${plugins.length} registered · ${counts['online'] ?? 0} online${counts['stale'] ? ` · ${counts['stale']} stale` : ''}${counts['offline'] ? ` · ${counts['offline']} offline` : ''}${counts['error'] ? ` · ${counts['error']} in error` : ''}`}
          </p>
        </div>
        <input
          class="filter"
          type="search"
          placeholder="Filter plugins"
          aria-label="Filter plugins"
          value={filter}
          onInput={(e) => setFilter((e.target as HTMLInputElement).value)}
        />
      </div>
      <ErrorNote error={error} />
      <div class="table-wrap">
        <table class="plugins" aria-label="Plugins">
          <thead>
            <tr>
              <th>Plugin</th>
              <th>Type</th>
              <th>State</th>
              <th>Capabilities</th>
              <th>Last outcome</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((p) => {
              const last = newer(loaded.get(p.id), live.get(p.id));
              const flashed = (flash.get(p.id) ?? 0) > Date.now() - 1500;
              return (
                <tr key={p.id} data-plugin={p.id} class={flashed ? 'flash' : ''}>
                  <td>
                    <a href={href(`plugins/${encodeURIComponent(p.id)}`)} class="plugin-name">
                      {p.name}
                    </a>
                    <div class="sub mono">
                      {p.id}
                      {p.version ? ` · v${p.version}` : ''}
                    </div>
                  </td>
                  <td>
                    <span class="type">{p.type}</span>
                  </td>
                  <td>
                    <StateBadge state={p.state} reason={p.state_reason} />
                    {p.state_reason && p.state !== 'online' ? <div class="sub">{p.state_reason}</div> : null}
                  </td>
                  <td class="sub">{p.capabilities.join(', ')}</td>
                  <td data-testid="last-outcome">
                    {last ? (
                      <>
                        <OutcomeBadge outcome={last.outcome} />
                        <div class="sub">
                          {last.capability_id} · {duration(last.duration_ms)} · {ago(last.ts)}
                        </div>
                      </>
                    ) : (
                      <span class="muted">never called</span>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {plugins !== undefined && rows.length === 0 ? (
          <p class="empty">{plugins.length === 0 ? 'No plugin is registered yet.' : 'No plugin matches the filter.'}</p>
        ) : null}
      </div>
    </section>
  );
}
