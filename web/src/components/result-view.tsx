// A PluginResult as a person reads it: success or the error code, the text, the data, every problem.
import { OutcomeBadge } from './badges.js';
import { duration, outcomeOf, pretty } from '../format.js';
import type { PluginResult } from '../types.js';

export function ResultView(props: { result: PluginResult; status: number; elapsedMs: number }) {
  const { result } = props;
  const problems = result.metadata?.problems ?? [];
  return (
    <div class={`result ${result.success ? 'ok' : 'failed'}`} data-testid="result" role="status">
      <div class="result-head">
        <OutcomeBadge outcome={outcomeOf(result)} />
        <span class="sub">
          HTTP {props.status} · {duration(props.elapsedMs)}
          {result.request_id ? (
            <>
              {' '}
              · <span class="mono">{result.request_id}</span>
            </>
          ) : null}
        </span>
      </div>
      {result.text ? <p class="result-text">{result.text}</p> : null}
      {result.error ? <p class="result-error">{result.error}</p> : null}
      {problems.length > 0 ? (
        <ul class="problems">
          {problems.map((p) => (
            <li key={`${p.path}:${p.message}`}>
              <span class="mono">{p.path || '(parameters)'}</span> {p.message}
            </li>
          ))}
        </ul>
      ) : null}
      {result.data !== undefined ? (
        <details open={!result.text}>
          <summary>data</summary>
          <pre class="mono">{pretty(result.data)}</pre>
        </details>
      ) : null}
    </div>
  );
}
