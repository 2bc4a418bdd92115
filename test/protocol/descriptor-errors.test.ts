// Every bad descriptor is rejected with EVERY problem listed, each at its path in the input.
import { describe, expect, it } from 'vitest';
import { normalizeDescriptor } from '../../src/protocol/descriptor/normalize.js';
import type { ValidationIssue } from '../../src/protocol/types.js';

const options = { source: 'external', default_type: 'mqtt' } as const;

const goodCapability = { id: 'go', name: 'Go', description: 'Does it', parameters: [{ name: 'x', type: 'string' }] };
const good = { id: 'good', name: 'Good', description: 'A good plugin', capabilities: [goodCapability] };
const long = 'a'.repeat(200);
const ID_RULE = '^[a-z0-9][a-z0-9_-]{0,63}$ (lowercase letters, digits, _ and -; no /, + or #)';
const TYPES = 'string, number, integer, boolean, object, array';

interface Case {
  name: string;
  input: unknown;
  errors: ValidationIssue[];
}

const cases: Case[] = [
  {
    name: 'missing required fields',
    input: {},
    errors: [
      { path: '/id', message: 'id is required (HomeClaw manifests use "id", registration JSON "plugin_id")' },
      { path: '/name', message: 'name is required' },
      { path: '/description', message: 'description is required' },
    ],
  },
  { name: 'id a/b', input: { ...good, id: 'a/b' }, errors: [{ path: '/id', message: `plugin id "a/b" must match ${ID_RULE}` }] },
  { name: 'id +', input: { ...good, id: '+' }, errors: [{ path: '/id', message: `plugin id "+" must match ${ID_RULE}` }] },
  { name: 'id #', input: { ...good, id: '#' }, errors: [{ path: '/id', message: `plugin id "#" must match ${ID_RULE}` }] },
  { name: 'empty id', input: { ...good, id: '' }, errors: [{ path: '/id', message: 'plugin id must not be empty' }] },
  {
    name: '200-character id',
    input: { ...good, id: long },
    errors: [{ path: '/id', message: 'plugin id is 200 characters long; at most 64 are allowed' }],
  },
  {
    name: 'bad plugin_id in registration JSON',
    input: { ...good, id: undefined, plugin_id: 'Slack Bot' },
    errors: [{ path: '/plugin_id', message: `plugin id "Slack Bot" must match ${ID_RULE}` }],
  },
  { name: 'id not a string', input: { ...good, id: 7 }, errors: [{ path: '/id', message: 'plugin id must be a string' }] },
  {
    name: 'wrong parameter type',
    input: {
      ...good,
      capabilities: [
        {
          ...goodCapability,
          parameters: [
            { name: 'x', type: 'strnig' },
            { name: 'y', type: 42 },
          ],
        },
      ],
    },
    errors: [
      { path: '/capabilities/0/parameters/0/type', message: `unknown parameter type "strnig"; allowed types: ${TYPES}` },
      { path: '/capabilities/0/parameters/1/type', message: `unknown parameter type number 42; allowed types: ${TYPES}` },
    ],
  },
  {
    name: 'missing parameter type and name',
    input: { ...good, capabilities: [{ ...goodCapability, parameters: [{ description: 'nameless' }] }] },
    errors: [
      { path: '/capabilities/0/parameters/0/name', message: 'parameter name is required' },
      { path: '/capabilities/0/parameters/0/type', message: `type is required; one of: ${TYPES}` },
    ],
  },
  {
    name: 'duplicate capability id and parameter name',
    input: {
      ...good,
      capabilities: [
        goodCapability,
        {
          ...goodCapability,
          parameters: [
            { name: 'x', type: 'string' },
            { name: 'x', type: 'number' },
          ],
        },
      ],
    },
    errors: [
      { path: '/capabilities/1/parameters/1/name', message: 'duplicate parameter name "x" (first defined at /capabilities/1/parameters/0/name)' },
      { path: '/capabilities/1/id', message: 'duplicate capability id "go" (first defined at /capabilities/0/id)' },
    ],
  },
  {
    name: 'unknown plugin type',
    input: { ...good, type: 'carrier-pigeon' },
    errors: [
      {
        path: '/type',
        message: 'unknown plugin type "carrier-pigeon"; allowed types: inline, mqtt, http, subprocess, mcp, homeassistant, zigbee2mqtt, python',
      },
    ],
  },
  {
    name: 'bad capability ids and parameter names',
    input: {
      ...good,
      capabilities: [
        { ...goodCapability, id: 'a b' },
        { ...goodCapability, id: '' },
        {
          ...goodCapability,
          id: 'ok',
          parameters: [
            { name: '1x', type: 'string' },
            { name: 'a/b', type: 'string' },
          ],
        },
      ],
    },
    errors: [
      { path: '/capabilities/0/id', message: 'capability id "a b" must match ^[A-Za-z0-9_-]{1,64}$ (letters, digits, _ and -)' },
      { path: '/capabilities/1/id', message: 'capability id must not be empty' },
      {
        path: '/capabilities/2/parameters/0/name',
        message: 'parameter name "1x" must match ^[A-Za-z_][A-Za-z0-9_-]{0,63}$ (a letter or _, then letters, digits, _ and -)',
      },
      {
        path: '/capabilities/2/parameters/1/name',
        message: 'parameter name "a/b" must match ^[A-Za-z_][A-Za-z0-9_-]{0,63}$ (a letter or _, then letters, digits, _ and -)',
      },
    ],
  },
  {
    name: 'wrong field types everywhere',
    input: {
      ...good,
      name: '',
      version: 1.0,
      examples: ['ok', 3],
      health_check_url: 'not a url',
      config: { max_concurrency: 0, use_defaults_directly: 'yes' },
      capabilities: [
        {
          ...goodCapability,
          description: 5,
          post_process: 'true',
          method: 'FETCH',
          timeout_sec: 0,
          parameters: [
            { name: 'n', type: 'integer', default: 1.5, enum: [1, 'two'] },
            { name: 'when', type: 'string', system_key: 'weather', required: 'no' },
          ],
        },
      ],
    },
    errors: [
      { path: '/name', message: 'must not be empty' },
      { path: '/examples/1', message: 'must be a string, not number 3' },
      { path: '/version', message: 'must be a string (quote it in YAML: version: "1.0")' },
      { path: '/health_check_url', message: 'must be an absolute http(s) URL, not "not a url"' },
      { path: '/config/use_defaults_directly', message: 'must be true or false, not "yes"' },
      { path: '/config/max_concurrency', message: 'must be >= 1' },
      { path: '/capabilities/0/description', message: 'must be a string, not number 5' },
      { path: '/capabilities/0/parameters/0/default', message: 'must be of type integer' },
      { path: '/capabilities/0/parameters/0/enum/1', message: 'must be of type integer' },
      { path: '/capabilities/0/parameters/1/required', message: 'must be true or false, not "no"' },
      {
        path: '/capabilities/0/parameters/1/system_key',
        message: 'unknown system key "weather"; allowed: datetime, date, time, timezone, location, user_id, channel',
      },
      { path: '/capabilities/0/post_process', message: 'must be true or false, not "true"' },
      { path: '/capabilities/0/method', message: 'unknown HTTP method "FETCH"; allowed: GET, POST, PUT, PATCH, DELETE' },
      { path: '/capabilities/0/timeout_sec', message: 'must be > 0' },
    ],
  },
  {
    name: 'capabilities empty',
    input: { ...good, capabilities: [] },
    errors: [{ path: '/capabilities', message: 'must not be empty (omit it for a single default "run" capability)' }],
  },
  {
    name: 'id and plugin_id disagree',
    input: { ...good, plugin_id: 'other' },
    errors: [{ path: '/plugin_id', message: 'must equal id ("good") when both are given' }],
  },
  {
    name: 'ForgeSyte: bad name, empty tool description, bad tool id, unknown property type',
    input: {
      name: 'Yolo Tracker',
      description: 'x',
      tools: {
        'a/b': { description: 'slash', input_schema: {} },
        detect: { description: '', input_schema: { frame: { type: 'tensor' }, '9lives': { type: 'string' } } },
      },
    },
    errors: [
      { path: '/name', message: `plugin id "Yolo Tracker" must match ${ID_RULE}` },
      { path: '/tools/a~1b', message: 'capability id "a/b" must match ^[A-Za-z0-9_-]{1,64}$ (letters, digits, _ and -)' },
      { path: '/tools/detect/description', message: 'must not be empty' },
      { path: '/tools/detect/input_schema/frame/type', message: `unknown parameter type "tensor"; allowed types: ${TYPES}` },
      {
        path: '/tools/detect/input_schema/9lives',
        message: 'parameter name "9lives" must match ^[A-Za-z_][A-Za-z0-9_-]{0,63}$ (a letter or _, then letters, digits, _ and -)',
      },
    ],
  },
  {
    name: 'ForgeSyte: empty tools and a non-object input schema',
    input: { name: 'empty', description: 'x', tools: {} },
    errors: [{ path: '/tools', message: 'must be a non-empty object keyed by tool id' }],
  },
  {
    name: 'ForgeSyte: full input schema that is not an object schema',
    input: { name: 'strange', description: 'x', tools: { t: { description: 'd', input_schema: { type: 'string' } } } },
    errors: [{ path: '/tools/t/input_schema/type', message: 'an input schema must describe an object (type "object"), not "string"' }],
  },
  {
    name: 'RAGFlow: bad name, missing description, unknown parameter type',
    input: { name: '+', parameters: { a: { type: 'whatever', required: true }, b: 'number' } },
    errors: [
      { path: '/name', message: `plugin id "+" must match ${ID_RULE}` },
      { path: '/description', message: 'description is required' },
      { path: '/parameters/a/type', message: `unknown parameter type "whatever"; allowed types: ${TYPES}` },
      { path: '/parameters/b', message: 'parameter must be an object, not "number"' },
    ],
  },
  { name: 'not an object (array)', input: [good], errors: [{ path: '', message: 'descriptor must be a JSON object, not a list' }] },
  { name: 'not an object (null)', input: null, errors: [{ path: '', message: 'descriptor must be a JSON object, not null' }] },
];

const byPath = (a: ValidationIssue, b: ValidationIssue): number => (a.path === b.path ? a.message.localeCompare(b.message) : a.path.localeCompare(b.path));

describe('bad descriptors', () => {
  it.each(cases)('$name', ({ input, errors }) => {
    const outcome = normalizeDescriptor(input, options);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect([...outcome.errors].sort(byPath)).toEqual([...errors].sort(byPath));
  });

  it('the good base descriptor used above is accepted', () => {
    expect(normalizeDescriptor(good, options).ok).toBe(true);
  });
});
