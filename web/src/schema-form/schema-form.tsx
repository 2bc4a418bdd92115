// A form generated from a capability's parameter JSON Schema: one control per listed property (text,
// number, true/false, a list for enums, JSON text for arrays and objects), the description under each,
// required fields marked, and every problem shown beside its field.
import type { FormSpec, FieldSpec } from './fields.js';
import { optionText } from './fields.js';

export interface SchemaFormProps {
  idPrefix: string;
  form: FormSpec;
  texts: Record<string, string>;
  extraText: string;
  errors: Record<string, string>;
  onText: (name: string, text: string) => void;
  onExtraText: (text: string) => void;
}

function Control(props: { id: string; field: FieldSpec; text: string; onText: (text: string) => void }) {
  const { field, id } = props;
  const set = (event: Event): void => props.onText((event.target as HTMLInputElement).value);
  if (field.kind === 'enum' || field.kind === 'boolean') {
    const options =
      field.kind === 'enum'
        ? (field.options ?? []).map((value) => ({ value: optionText(value), label: typeof value === 'string' ? value : optionText(value) }))
        : ['true', 'false'].map((v) => ({ value: v, label: v }));
    return (
      <select id={id} name={field.name} value={props.text} onChange={set}>
        <option value="">{field.required ? 'choose…' : '(not set)'}</option>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    );
  }
  if (field.kind === 'json') {
    const placeholder = field.json === 'array' ? '["…"]' : field.json === 'object' ? '{"key": "value"}' : 'any JSON value';
    return <textarea id={id} name={field.name} rows={3} class="mono" spellcheck={false} placeholder={placeholder} value={props.text} onInput={set} />;
  }
  if (field.kind === 'number' || field.kind === 'integer') {
    return (
      <input
        id={id}
        name={field.name}
        type="number"
        step={field.kind === 'integer' ? 1 : 'any'}
        min={field.minimum}
        max={field.maximum}
        value={props.text}
        onInput={set}
        autocomplete="off"
      />
    );
  }
  return <input id={id} name={field.name} type="text" value={props.text} onInput={set} autocomplete="off" />;
}

export function SchemaForm(props: SchemaFormProps) {
  const { form } = props;
  if (form.fields.length === 0 && !form.extra) return <p class="muted">This capability takes no parameters.</p>;
  return (
    <div class="schema-form">
      {form.fields.map((field) => {
        const id = `${props.idPrefix}-${field.name}`;
        const error = props.errors[field.name];
        return (
          <div class={`field${error ? ' invalid' : ''}`} key={field.name} data-field={field.name}>
            <label for={id}>
              <span class="mono">{field.name}</span>
              {field.required ? (
                <span class="required" title="required">
                  *
                </span>
              ) : null}
              <span class="kind">{field.kind === 'json' ? `${field.json === 'any' ? 'JSON' : field.json} (JSON)` : field.kind}</span>
            </label>
            <Control id={id} field={field} text={props.texts[field.name] ?? field.initial} onText={(text) => props.onText(field.name, text)} />
            {field.description ? <small class="help">{field.description}</small> : null}
            {error ? (
              <small class="field-error" role="alert">
                {error}
              </small>
            ) : null}
          </div>
        );
      })}
      {form.extra ? (
        <div class={`field${props.errors['*'] ? ' invalid' : ''}`} data-field="*">
          <label for={`${props.idPrefix}-extra`}>{form.fields.length > 0 ? 'More parameters (JSON object)' : 'Parameters (JSON object)'}</label>
          <textarea
            id={`${props.idPrefix}-extra`}
            rows={3}
            class="mono"
            spellcheck={false}
            placeholder='{"key": "value"}'
            value={props.extraText}
            onInput={(e) => props.onExtraText((e.target as HTMLTextAreaElement).value)}
          />
          {props.errors['*'] ? <small class="field-error">{props.errors['*']}</small> : null}
        </div>
      ) : null}
    </div>
  );
}
