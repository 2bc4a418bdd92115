// Retrieval as the Core sees it: the plugins a request would be routed among, each with its score (and
// its BM25 and embedding parts in hybrid mode) and its best-matching capabilities. A user token sees only
// the plugins its policy reaches.
import { useState } from 'preact/hooks';
import { getJson } from '../api.js';
import { ErrorNote, StateBadge } from '../components/badges.js';
import type { SearchAnswer } from '../types.js';

const MODE_TEXT: Record<SearchAnswer['mode'], string> = {
  hybrid: 'hybrid (BM25 + embeddings)',
  bm25: 'BM25 only (keywords)',
  dense: 'embeddings only',
};

export function SearchPage() {
  const [query, setQuery] = useState('');
  const [k, setK] = useState('5');
  const [answer, setAnswer] = useState<SearchAnswer | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const search = async (event: Event): Promise<void> => {
    event.preventDefault();
    if (!query.trim()) return;
    setBusy(true);
    try {
      setAnswer(await getJson<SearchAnswer>(`api/plugins/search?${new URLSearchParams({ q: query, k }).toString()}`));
      setError(undefined);
    } catch (err) {
      setError((err as Error).message);
    }
    setBusy(false);
  };

  const top = Math.max(...(answer?.hits.map((h) => h.score) ?? [0]), 1e-9);
  return (
    <section>
      <div class="page-head">
        <div>
          <h1>Search</h1>
          <p class="muted">What would the assistant pick for a request? The same ranking the conversation engine uses.</p>
        </div>
      </div>
      {/* biome-ignore lint/a11y/useSemanticElements: the form itself is the search landmark; a <search> wrapper would only add a box. */}
      <form class="search-box" onSubmit={(e) => void search(e)} role="search">
        <input
          type="search"
          placeholder="e.g. will it rain tomorrow"
          aria-label="Search plugins"
          value={query}
          onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
          autofocus
        />
        <select aria-label="How many results" value={k} onChange={(e) => setK((e.target as HTMLSelectElement).value)}>
          {['3', '5', '10', '20'].map((n) => (
            <option key={n} value={n}>
              top {n}
            </option>
          ))}
        </select>
        <button type="submit" class="primary" disabled={busy || !query.trim()}>
          {busy ? 'Searching…' : 'Search'}
        </button>
      </form>
      <ErrorNote error={error} />
      {answer ? (
        <div class="search-results" data-testid="search-results">
          <p class="sub">
            {answer.hits.length} result{answer.hits.length === 1 ? '' : 's'} · mode {MODE_TEXT[answer.mode]}
          </p>
          {answer.warnings?.map((w) => (
            <p class="notice" key={w}>
              {w}
            </p>
          ))}
          <ol class="hits">
            {answer.hits.map((hit, index) => (
              <li class="card hit" key={hit.plugin_id} data-plugin={hit.plugin_id}>
                <div class="hit-head">
                  <span class="rank">{index + 1}</span>
                  <div class="hit-title">
                    <strong>{hit.name}</strong> <span class="mono sub">{hit.plugin_id}</span> <StateBadge state={hit.state} />
                    {hit.reason !== 'ranked' ? <span class="badge muted">{hit.reason}</span> : null}
                    <div class="sub">{hit.description}</div>
                  </div>
                  <div class="score" title="retrieval score">
                    <span class="score-value" data-testid="score">
                      {hit.score.toFixed(3)}
                    </span>
                    <span class="bar">
                      <span style={{ width: `${Math.max(2, (hit.score / top) * 100)}%` }} />
                    </span>
                    {hit.bm25_score !== undefined || hit.dense_score !== undefined ? (
                      <span class="sub">
                        {hit.bm25_score !== undefined ? `BM25 ${hit.bm25_score.toFixed(3)}` : ''}
                        {hit.bm25_score !== undefined && hit.dense_score !== undefined ? ' · ' : ''}
                        {hit.dense_score !== undefined ? `dense ${hit.dense_score.toFixed(3)}` : ''}
                      </span>
                    ) : null}
                  </div>
                </div>
                {hit.capabilities.length > 0 ? (
                  <ul class="hit-caps">
                    {hit.capabilities.map((c) => (
                      <li key={c.capability_id}>
                        <span class="mono">{c.capability_id}</span> {c.description} <span class="sub">({c.score.toFixed(3)})</span>
                      </li>
                    ))}
                  </ul>
                ) : null}
              </li>
            ))}
          </ol>
          {answer.hits.length === 0 ? <p class="empty">No plugin matches.</p> : null}
        </div>
      ) : null}
    </section>
  );
}
