// A device's exposes, read the way Zigbee2MQTT's documentation defines them: what can be set (access
// bit 2) becomes one parameter per property, what can be read with /get (bit 4) is refreshed by
// get_state, and every reported feature is described for retrieval. Specific exposes (light, switch,
// cover, lock, climate, fan) are flattened into their features, whose properties already carry the
// endpoint suffix Zigbee2MQTT uses (state_left); a composite is one object parameter.
import { isParameterName } from '../../protocol/descriptor/name-patterns.js';
import type { JsonObject, JsonValue, ParameterSpec, ParameterType } from '../../protocol/types.js';
import { ACCESS, type Z2mExpose } from '../../protocol/zigbee2mqtt.js';

/** One feature of the device, flattened: what retrieval text and examples are made of. */
export interface Feature {
  property: string;
  /** The feature's name without endpoint (water_leak, state, occupied_heating_setpoint). */
  name: string;
  label: string;
  description?: string;
  access: number;
  unit?: string;
  /** The specific expose it belongs to (light, switch, cover...), when any. */
  group?: string;
  /** Zigbee2MQTT's category: 'config' or 'diagnostic' for secondary features. */
  category?: string;
  endpoint?: string;
}

export interface DeviceControls {
  /** One optional parameter per settable property. */
  setParameters: ParameterSpec[];
  /** The JSON Schema the set capability validates with (ranges, enums, composites; no unknown keys). */
  setSchema: JsonObject;
  /** Properties a /get can refresh. */
  readableByGet: string[];
  /** Unit of each numeric property, to write readable answers. */
  units: Record<string, string>;
  features: Feature[];
  /** Properties that cannot be parameter names (e.g. starting with a digit): not settable through the Core. */
  unusable: string[];
}

const MAX_DESCRIPTION = 240;

function accessOf(expose: Z2mExpose): number {
  if (typeof expose.access === 'number') return expose.access;
  // A composite without its own access has the union of its features' access.
  return (expose.features ?? []).reduce((bits, feature) => bits | accessOf(feature), 0);
}

function has(expose: Z2mExpose, bit: number): boolean {
  return (accessOf(expose) & bit) !== 0;
}

function labelOf(expose: Z2mExpose): string {
  return expose.label ?? (expose.name ?? expose.property ?? expose.type).replace(/_/g, ' ');
}

function jsonType(values: JsonValue[]): ParameterType | undefined {
  if (values.length === 0) return undefined;
  if (values.every((v) => typeof v === 'boolean')) return 'boolean';
  if (values.every((v) => typeof v === 'number')) return values.every((v) => Number.isInteger(v)) ? 'integer' : 'number';
  if (values.every((v) => typeof v === 'string')) return 'string';
  return undefined;
}

function binaryValues(expose: Z2mExpose): JsonValue[] {
  const values = [expose.value_on, expose.value_off, expose.value_toggle].filter((v): v is JsonValue => v !== undefined);
  return values.filter((v, i) => values.findIndex((w) => JSON.stringify(w) === JSON.stringify(v)) === i);
}

/** The JSON Schema of a value of this expose (for /set, and for list items whatever their access). */
export function exposeSchema(expose: Z2mExpose, settableOnly: boolean): JsonObject {
  switch (expose.type) {
    case 'binary': {
      const values = binaryValues(expose);
      if (jsonType(values) === 'boolean' && values.length === 2) return { type: 'boolean' };
      const type = jsonType(values);
      return type ? { type, enum: values } : { enum: values };
    }
    case 'numeric': {
      const range: JsonObject = { type: 'number' };
      if (typeof expose.value_min === 'number') range['minimum'] = expose.value_min;
      if (typeof expose.value_max === 'number') range['maximum'] = expose.value_max;
      const presets = (expose.presets ?? []).map((p) => p.value);
      const outside = presets.filter(
        (v) =>
          typeof v !== 'number' ||
          (typeof expose.value_min === 'number' && v < expose.value_min) ||
          (typeof expose.value_max === 'number' && v > expose.value_max),
      );
      // A preset such as color_temp_startup's "previous" (65535) lies outside the range on purpose.
      return outside.length > 0 ? { anyOf: [range, { enum: outside }] } : range;
    }
    case 'enum': {
      const values = expose.values ?? [];
      const type = jsonType(values);
      return type ? { type, enum: values } : { enum: values };
    }
    case 'text':
      return { type: 'string' };
    case 'list': {
      const schema: JsonObject = { type: 'array' };
      if (expose.item_type) schema['items'] = exposeSchema(expose.item_type, false);
      if (typeof expose.length_min === 'number') schema['minItems'] = expose.length_min;
      if (typeof expose.length_max === 'number') schema['maxItems'] = expose.length_max;
      return schema;
    }
    default: {
      // Composite, or a specific type nested where a value is expected: an object of its features.
      const properties: JsonObject = {};
      for (const feature of expose.features ?? []) {
        const key = feature.property ?? feature.name;
        if (key === undefined || (settableOnly && !has(feature, ACCESS.SET))) continue;
        properties[key] = exposeSchema(feature, settableOnly);
      }
      return { type: 'object', properties, additionalProperties: false };
    }
  }
}

function parameterType(schema: JsonObject): ParameterType {
  const type = schema['type'];
  if (typeof type === 'string' && ['string', 'number', 'integer', 'boolean', 'object', 'array'].includes(type)) return type as ParameterType;
  if (Array.isArray(schema['anyOf'])) return 'number';
  const values = Array.isArray(schema['enum']) ? (schema['enum'] as JsonValue[]) : [];
  return jsonType(values) ?? 'string';
}

function clip(text: string): string {
  return text.length <= MAX_DESCRIPTION ? text : `${text.slice(0, MAX_DESCRIPTION - 1)}…`;
}

/** What a user needs to choose a value: the meaning, then the range, values or presets. */
function parameterDescription(expose: Z2mExpose, schema: JsonObject): string {
  const parts = [expose.description ? `${labelOf(expose)}: ${expose.description}` : labelOf(expose)];
  if (expose.type === 'numeric') {
    const range =
      typeof expose.value_min === 'number' && typeof expose.value_max === 'number'
        ? `${expose.value_min} to ${expose.value_max}`
        : typeof expose.value_min === 'number'
          ? `at least ${expose.value_min}`
          : typeof expose.value_max === 'number'
            ? `at most ${expose.value_max}`
            : '';
    const unit = expose.unit ? ` ${expose.unit}` : '';
    if (range) parts.push(`${range}${unit}`);
    else if (unit) parts.push(`in${unit}`);
    if (expose.presets?.length) parts.push(`presets: ${expose.presets.map((p) => `${p.name}=${JSON.stringify(p.value)}`).join(', ')}`);
  } else if (Array.isArray(schema['enum'])) {
    parts.push(`one of ${(schema['enum'] as JsonValue[]).map((v) => JSON.stringify(v)).join(', ')}`);
  } else if (expose.type === 'composite') {
    const keys = Object.keys((schema['properties'] as JsonObject | undefined) ?? {});
    if (keys.length > 0) parts.push(`an object with ${keys.join(', ')}`);
  }
  return clip(parts.join('; '));
}

/** Two exposes may share a property (a light's color_xy and color_hs are both "color"): one object takes both. */
function mergeObjectSchemas(a: JsonObject, b: JsonObject): JsonObject | null {
  if (a['type'] !== 'object' || b['type'] !== 'object') return null;
  return { ...a, properties: { ...(a['properties'] as JsonObject), ...(b['properties'] as JsonObject) } };
}

/** Calls visit for every expose that carries a value, with the specific expose it sits in. */
function walk(exposes: Z2mExpose[], visit: (expose: Z2mExpose, group?: string) => void, group?: string): void {
  for (const expose of exposes) {
    const isContainer = Array.isArray(expose.features) && expose.type !== 'composite';
    if (isContainer) walk(expose.features ?? [], visit, expose.type);
    else if (expose.type === 'composite' && expose.property === undefined) walk(expose.features ?? [], visit, group);
    else visit(expose, group);
  }
}

export function deviceControls(exposes: Z2mExpose[]): DeviceControls {
  const properties: JsonObject = {};
  const parameters = new Map<string, ParameterSpec>();
  const readable = new Set<string>();
  const units: Record<string, string> = {};
  const features: Feature[] = [];
  const unusable = new Set<string>();
  walk(exposes, (expose, group) => {
    const property = expose.property ?? expose.name;
    if (property === undefined) return;
    const access = accessOf(expose);
    features.push({
      property,
      name: expose.name ?? property,
      label: labelOf(expose),
      access,
      ...(expose.description ? { description: expose.description } : {}),
      ...(expose.unit ? { unit: expose.unit } : {}),
      ...(group ? { group } : {}),
      ...(expose.category ? { category: expose.category } : {}),
      ...(expose.endpoint ? { endpoint: expose.endpoint } : {}),
    });
    if (expose.unit && expose.type === 'numeric') units[property] = expose.unit;
    if (access & ACCESS.GET) readable.add(property);
    if (!(access & ACCESS.SET)) return;
    if (!isParameterName(property)) {
      unusable.add(property);
      return;
    }
    const schema = exposeSchema(expose, true);
    const existing = parameters.get(property);
    if (existing) {
      const merged = mergeObjectSchemas(properties[property] as JsonObject, schema);
      if (!merged) return;
      properties[property] = merged;
      parameters.set(property, {
        ...existing,
        properties: merged['properties'] as JsonObject,
        description: clip(`${existing.description ?? ''} / ${parameterDescription(expose, schema)}`),
      });
      return;
    }
    properties[property] = schema;
    const type = parameterType(schema);
    const parameter: ParameterSpec = { name: property, type, required: false, description: parameterDescription(expose, schema) };
    if (Array.isArray(schema['enum'])) parameter.enum = schema['enum'] as JsonValue[];
    if (type === 'object' && schema['properties']) parameter.properties = schema['properties'] as JsonObject;
    if (type === 'array' && schema['items']) parameter.items = schema['items'] as JsonObject;
    parameters.set(property, parameter);
  });
  return {
    setParameters: [...parameters.values()],
    setSchema: { type: 'object', properties, additionalProperties: false },
    readableByGet: [...readable],
    units,
    features,
    unusable: [...unusable],
  };
}
