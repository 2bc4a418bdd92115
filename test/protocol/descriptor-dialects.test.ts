import { describe, expect, it } from 'vitest';
import { normalizeDescriptor, descriptorContentHash } from '../../src/protocol/descriptor/normalize.js';
import type { NormalizeOptions } from '../../src/protocol/descriptor/normalize.js';
import { getSchemaValidator } from '../../src/protocol/schemas.js';
import type { PluginDescriptor } from '../../src/protocol/types.js';
import { fixture } from './fixtures.js';

const builtIn: NormalizeOptions = { source: 'built-in', default_type: 'inline' };
const external: NormalizeOptions = { source: 'external', default_type: 'mqtt' };

function normalizeOk(input: unknown, options: NormalizeOptions = external): { descriptor: PluginDescriptor; dialect: string } {
  const outcome = normalizeDescriptor(input, options);
  if (!outcome.ok) throw new Error(`expected ok, got ${JSON.stringify(outcome.errors)}`);
  // Whatever comes out satisfies the canonical schema file itself.
  expect(getSchemaValidator('descriptor')(outcome.descriptor)).toBe(true);
  return outcome;
}

describe('HomeClaw dialect', () => {
  it('normalises the built-in weather plugin.yaml', () => {
    const { descriptor, dialect } = normalizeOk(fixture('weather.plugin.yaml'), builtIn);
    expect(dialect).toBe('homeclaw');
    expect(descriptor).toMatchObject({
      id: 'weather',
      name: 'Weather Plugin',
      source: 'built-in',
      type: 'inline',
      config: {},
    });
    expect(descriptor.description_long).toContain('umbrella');
    const [capability] = descriptor.capabilities;
    expect(capability).toMatchObject({
      id: 'fetch_weather',
      name: 'Get current weather',
      post_process: true,
      post_process_prompt: expect.stringContaining('umbrella'),
      output_description: expect.stringContaining('"temperature": number'),
    });
    expect(capability?.parameters).toEqual([
      { name: 'city', type: 'string', required: true, description: 'City name, e.g. Beijing.' },
      { name: 'district', type: 'string', required: false, description: 'District within the city, e.g. Daxing.' },
    ]);
    expect(capability?.input_schema).toBeUndefined();
  });

  it('normalises the news plugin.yaml with only optional parameters', () => {
    const { descriptor } = normalizeOk(fixture('news.plugin.yaml'), builtIn);
    expect(descriptor.id).toBe('news');
    expect(descriptor.capabilities[0]?.parameters.map((p) => [p.name, p.required])).toEqual([
      ['country', false],
      ['category', false],
      ['sources', false],
    ]);
  });

  it('normalises the slack-bot registration JSON (plugin_id, http, method/path, health check)', () => {
    const { descriptor } = normalizeOk(fixture('slack-bot.register.json'));
    expect(descriptor).toMatchObject({
      id: 'slack-bot',
      type: 'http',
      source: 'external',
      health_check_url: 'http://127.0.0.1:3100/health',
      config: { base_url: 'http://127.0.0.1:3100', path: '/run', timeout_sec: 30 },
    });
    expect(descriptor).not.toHaveProperty('plugin_id');
    expect(descriptor.capabilities[0]).toMatchObject({ id: 'post_message', method: 'POST', path: '/post', post_process: false });
  });

  it('keeps profile_key, config_key, confirm_if_uncertain and the plugin config of the buy plugin', () => {
    const { descriptor } = normalizeOk(fixture('buy.plugin.yaml'), builtIn);
    const parameters = descriptor.capabilities[0]?.parameters ?? [];
    expect(parameters.find((p) => p.name === 'item')).toEqual({
      name: 'item',
      type: 'string',
      required: true,
      description: 'Item to buy (e.g. milk, bread).',
    });
    expect(parameters.find((p) => p.name === 'address')).toMatchObject({
      profile_key: 'address',
      config_key: 'default_address',
      confirm_if_uncertain: true,
    });
    expect(parameters.find((p) => p.name === 'contact_name')).toMatchObject({ profile_key: 'name' });
    expect(parameters.find((p) => p.name === 'payment_method')).toMatchObject({ required: false, config_key: 'payment_method' });
    expect(descriptor.config.default_parameters).toEqual({ address: '123 Main St, City', contact_name: 'John', payment_method: 'card' });
    expect(descriptor.config.capabilities).toEqual({ place_order: { default_parameters: { address: '123 Main St' } } });
    expect(descriptor.config.use_default_directly_for).toEqual(['address', 'phone', 'contact_name']);
  });

  it('gives a manifest without capabilities one default "run" capability with an optional user_input, wanting the request context', () => {
    const { descriptor } = normalizeOk(fixture('mail.plugin.yaml'), builtIn);
    expect(descriptor.config).toEqual({ config_file: 'config.yml' });
    expect(descriptor.capabilities).toEqual([
      {
        id: 'run',
        name: 'Mail Plugin',
        description: 'Send email. Select when the user wants to send an email.',
        parameters: [{ name: 'user_input', type: 'string', required: false, description: "The user's request." }],
        post_process: false,
        wants_context: true,
      },
    ]);
  });

  it('defaults parameter.required to true and post_process to false; takes system_key and examples', () => {
    const { descriptor } = normalizeOk({
      id: 'clock',
      name: 'Clock',
      description: 'Tells the time',
      examples: ['what time is it?'],
      keywords: ['time'],
      version: '2.0.0',
      capabilities: [
        {
          id: 'now',
          description: 'Current time',
          parameters: [
            { name: 'timezone', type: 'string', system_key: 'timezone' },
            { name: 'precise', type: 'boolean', default: false },
          ],
          timeout_sec: 2,
          output_schema: { type: 'object', properties: { time: { type: 'string' } } },
        },
      ],
    });
    expect(descriptor.examples).toEqual(['what time is it?']);
    expect(descriptor.capabilities[0]).toMatchObject({ name: 'now', post_process: false, timeout_sec: 2 });
    expect(descriptor.capabilities[0]?.parameters).toEqual([
      { name: 'timezone', type: 'string', required: true, system_key: 'timezone' },
      { name: 'precise', type: 'boolean', required: true, default: false },
    ]);
    expect(descriptor.type).toBe('mqtt');
  });

  it('derives parameters from a capability that only gives an input_schema (an MCP tool, say)', () => {
    const { descriptor } = normalizeOk({
      id: 'files',
      name: 'Files',
      description: 'File access',
      type: 'mcp',
      config: { command: 'node', args: ['files-server.js'] },
      capabilities: [
        {
          id: 'read_file',
          description: 'Read a file',
          input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        },
        {
          id: 'search',
          description: 'Search',
          input_schema: {
            type: 'object',
            properties: { pattern: { type: 'string', minLength: 1 }, exclude: { type: 'array', items: { type: 'string' } } },
            required: ['pattern'],
          },
        },
      ],
    });
    const [read, search] = descriptor.capabilities;
    expect(read?.parameters).toEqual([{ name: 'path', type: 'string', required: true }]);
    expect(read?.input_schema).toBeUndefined();
    expect(search?.parameters.map((p) => [p.name, p.required])).toEqual([
      ['pattern', true],
      ['exclude', false],
    ]);
    expect(search?.input_schema).toMatchObject({ properties: { pattern: { minLength: 1 } } });
  });

  it('sets source from the options, never from the input, and warns about ignored fields', () => {
    const outcome = normalizeDescriptor({ ...fixture('weather.plugin.yaml'), source: 'built-in', capabilites: [] }, external);
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.descriptor.source).toBe('external');
    expect(outcome.warnings).toEqual([
      { path: '/source', message: 'ignored: the Core sets source (external)' },
      { path: '/capabilites', message: 'unknown field ignored' },
    ]);
  });

  it('is idempotent: a canonical descriptor normalises to itself with the same content hash', () => {
    for (const name of ['weather.plugin.yaml', 'buy.plugin.yaml', 'slack-bot.register.json', 'yolo-tracker.forgesyte.json', 'bad_calculator.ragflow.json']) {
      const first = normalizeOk(fixture(name)).descriptor;
      const second = normalizeOk(JSON.parse(JSON.stringify(first))).descriptor;
      expect(second).toEqual(first);
      expect(descriptorContentHash(second)).toBe(descriptorContentHash(first));
    }
  });
});

describe('ForgeSyte dialect', () => {
  it("normalises ForgeSyte's yolo-tracker metadata example: name is the id, tools become capabilities", () => {
    const { descriptor, dialect } = normalizeOk(fixture('yolo-tracker.forgesyte.json'));
    expect(dialect).toBe('forgesyte');
    expect(descriptor).toMatchObject({ id: 'yolo-tracker', name: 'yolo-tracker', version: '1.2.0', type: 'mqtt', source: 'external' });
    expect(descriptor.capabilities.map((c) => c.id)).toEqual(['player_detection', 'ball_detection']);
    const player = descriptor.capabilities[0];
    expect(player).toMatchObject({ name: 'player_detection', description: 'Detect players in a frame', post_process: false });
    expect(player?.parameters).toEqual([{ name: 'frame_base64', type: 'string', required: true }]);
    // The bare map form is lossless here, so no full schema is kept.
    expect(player?.input_schema).toBeUndefined();
    // Output property maps become real JSON Schemas.
    expect(player?.output_schema).toMatchObject({ type: 'object', properties: { detections: { type: 'array' } } });
  });

  it('keeps a full input schema when min/max cannot be expressed as parameters, translated to JSON Schema', () => {
    const { descriptor } = normalizeOk(fixture('yolo-tracker.forgesyte.json'));
    const ball = descriptor.capabilities[1];
    expect(ball?.parameters).toEqual([
      { name: 'frame_base64', type: 'string', required: true, description: 'Base64-encoded video frame' },
      { name: 'threshold', type: 'number', required: false, default: 0.5 },
    ]);
    expect(ball?.input_schema).toEqual({
      type: 'object',
      properties: {
        frame_base64: { type: 'string', description: 'Base64-encoded video frame' },
        threshold: { type: 'number', default: 0.5, minimum: 0, maximum: 1 },
      },
      required: ['frame_base64'],
    });
  });

  it('accepts a full {type: object, properties, required} input schema and keeps it only when lossy', () => {
    const lossless = normalizeOk({
      name: 'echo',
      description: 'Echoes',
      tools: {
        say: {
          description: 'Say something',
          input_schema: { type: 'object', properties: { text: { type: 'string' }, times: { type: 'integer' } }, required: ['text'] },
          output_schema: {},
        },
      },
    }).descriptor.capabilities[0];
    expect(lossless?.parameters).toEqual([
      { name: 'text', type: 'string', required: true },
      { name: 'times', type: 'integer', required: false },
    ]);
    expect(lossless?.input_schema).toBeUndefined();
    expect(lossless?.output_schema).toBeUndefined();

    const anyOfSchema = {
      type: 'object',
      properties: { when: { anyOf: [{ type: 'string', format: 'date' }, { type: 'integer' }] }, tags: { type: ['array', 'null'], items: { type: 'string' } } },
      required: ['when'],
    };
    const lossy = normalizeOk({ name: 'cal', description: 'Calendar', tools: { add: { description: 'Add', input_schema: anyOfSchema } } }).descriptor
      .capabilities[0];
    expect(lossy?.parameters).toEqual([
      { name: 'when', type: 'string', required: true },
      { name: 'tags', type: 'array', required: false, items: { type: 'string' } },
    ]);
    expect(lossy?.input_schema).toEqual(anyOfSchema);
  });
});

describe('RAGFlow dialect', () => {
  it("normalises RAGFlow's bad_calculator demo into one capability named after the tool, display* ignored", () => {
    const outcome = normalizeDescriptor(fixture('bad_calculator.ragflow.json'), external);
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.dialect).toBe('ragflow');
    expect(outcome.warnings).toBeUndefined();
    expect(outcome.descriptor).toEqual({
      id: 'bad_calculator',
      name: 'bad_calculator',
      description: 'A tool to calculate the sum of two numbers (will give wrong answer)',
      type: 'mqtt',
      config: {},
      source: 'external',
      capabilities: [
        {
          id: 'bad_calculator',
          name: 'bad_calculator',
          description: 'A tool to calculate the sum of two numbers (will give wrong answer)',
          post_process: false,
          parameters: [
            { name: 'a', type: 'number', required: true, description: 'The first number' },
            { name: 'b', type: 'number', required: true, description: 'The second number' },
          ],
        },
      ],
    });
  });

  it('accepts Python type spellings and _version_', () => {
    const { descriptor } = normalizeOk({
      name: 'py_tool',
      description: 'Python-ish',
      _version_: '1.0.0',
      parameters: { n: { type: 'int', required: true }, ratio: { type: 'float', required: false }, flag: { type: 'bool', required: false } },
    });
    expect(descriptor.version).toBe('1.0.0');
    expect(descriptor.capabilities[0]?.parameters.map((p) => [p.name, p.type, p.required])).toEqual([
      ['n', 'integer', true],
      ['ratio', 'number', false],
      ['flag', 'boolean', false],
    ]);
  });
});

describe('descriptorContentHash', () => {
  it('ignores key order and changes with the content', () => {
    const { descriptor } = normalizeOk(fixture('weather.plugin.yaml'));
    const reordered = Object.fromEntries(Object.entries(descriptor).reverse()) as unknown as PluginDescriptor;
    expect(descriptorContentHash(reordered)).toBe(descriptorContentHash(descriptor));
    expect(descriptorContentHash(descriptor)).toMatch(/^[0-9a-f]{64}$/);
    expect(descriptorContentHash({ ...descriptor, description: 'changed' })).not.toBe(descriptorContentHash(descriptor));
  });
});
