// State and outcome badges: one colour per meaning, the word always written out (colour is never the
// only signal).
import type { PluginState } from '../types.js';

const STATE_TONE: Record<PluginState, string> = { online: 'good', stale: 'warn', offline: 'muted', error: 'bad' };

export function StateBadge(props: { state: PluginState; reason?: string | undefined }) {
  return (
    <span class={`badge ${STATE_TONE[props.state] ?? 'muted'}`} title={props.reason} data-state={props.state}>
      {props.state}
    </span>
  );
}

export function OutcomeBadge(props: { outcome: string }) {
  const tone = props.outcome === 'ok' ? 'good' : props.outcome === 'confirmation_required' ? 'warn' : 'bad';
  return (
    <span class={`badge ${tone}`} data-outcome={props.outcome}>
      {props.outcome}
    </span>
  );
}

export function ErrorNote(props: { error: string | undefined }) {
  return props.error ? (
    <p class="error-note" role="alert">
      {props.error}
    </p>
  ) : null;
}
