// "Try it": a capability's form, run through POST /v1/plugins/:id/tools/:tool/run. A capability that
// requires confirmation (its descriptor or the operator's policy) is never run on the first click: the
// values are shown first and only "Confirm and run" sends them, with ?confirmed=true.
import { useMemo, useState } from 'preact/hooks';
import { runCapability } from '../api.js';
import { pretty } from '../format.js';
import { collectParameters, formOf, type JsonValue } from '../schema-form/fields.js';
import { SchemaForm } from '../schema-form/schema-form.js';
import type { CapabilityInfo, PluginResult } from '../types.js';
import { ResultView } from './result-view.js';

type Phase = { step: 'edit' } | { step: 'confirm'; parameters: Record<string, JsonValue>; reason: string } | { step: 'running' };

export function TryIt(props: { pluginId: string; pluginName: string; capability: CapabilityInfo }) {
  const { capability } = props;
  const form = useMemo(() => formOf(capability.input_schema), [capability.input_schema]);
  const [texts, setTexts] = useState<Record<string, string>>({});
  const [extraText, setExtraText] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [phase, setPhase] = useState<Phase>({ step: 'edit' });
  const [outcome, setOutcome] = useState<{ result: PluginResult; status: number; elapsedMs: number } | undefined>(undefined);
  const idPrefix = `try-${capability.id}`;

  const run = async (parameters: Record<string, JsonValue>, confirmed: boolean): Promise<void> => {
    setPhase({ step: 'running' });
    const started = performance.now();
    try {
      const { status, result } = await runCapability(props.pluginId, capability.id, parameters, confirmed);
      const elapsedMs = performance.now() - started;
      if (!confirmed && result.error_code === 'confirmation_required') {
        setPhase({ step: 'confirm', parameters, reason: result.error ?? 'This call must be confirmed.' });
        return;
      }
      setOutcome({ result, status, elapsedMs });
    } catch (err) {
      setOutcome({
        result: { success: false, error: `The Core did not answer: ${(err as Error).message}` },
        status: 0,
        elapsedMs: performance.now() - started,
      });
    }
    setPhase({ step: 'edit' });
  };

  const submit = (event: Event): void => {
    event.preventDefault();
    const collected = collectParameters(form, texts, extraText);
    if (!collected.ok) {
      setErrors(collected.errors);
      return;
    }
    setErrors({});
    setOutcome(undefined);
    if (capability.requires_confirmation) setPhase({ step: 'confirm', parameters: collected.parameters, reason: 'This capability requires confirmation.' });
    else void run(collected.parameters, false);
  };

  const entries = phase.step === 'confirm' ? Object.entries(phase.parameters) : [];
  return (
    <form class="try-it" onSubmit={submit} data-capability={capability.id}>
      <SchemaForm
        idPrefix={idPrefix}
        form={form}
        texts={texts}
        extraText={extraText}
        errors={errors}
        onText={(name, text) => setTexts((previous) => ({ ...previous, [name]: text }))}
        onExtraText={setExtraText}
      />
      {phase.step === 'confirm' ? (
        <div class="confirm" role="alertdialog" aria-label="Confirm the call" data-testid="confirm">
          <p>
            <strong>Please confirm:</strong> {capability.name} ({props.pluginName}) {entries.length > 0 ? 'with' : 'without parameters'}
          </p>
          {entries.length > 0 ? (
            <dl class="values">
              {entries.map(([name, value]) => (
                <div key={name}>
                  <dt class="mono">{name}</dt>
                  <dd class="mono">{typeof value === 'string' ? value : pretty(value)}</dd>
                </div>
              ))}
            </dl>
          ) : null}
          <p class="sub">{phase.reason}</p>
          <div class="actions">
            <button type="button" class="primary danger" onClick={() => void run(phase.parameters, true)}>
              Confirm and run
            </button>
            <button type="button" onClick={() => setPhase({ step: 'edit' })}>
              Cancel
            </button>
          </div>
        </div>
      ) : (
        <div class="actions">
          <button type="submit" class="primary" disabled={phase.step === 'running'}>
            {phase.step === 'running' ? 'Running…' : capability.requires_confirmation ? 'Review and run' : 'Run'}
          </button>
        </div>
      )}
      {outcome ? <ResultView {...outcome} /> : null}
    </form>
  );
}
