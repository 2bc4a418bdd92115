import { describe, expect, it } from 'vitest';
import { DefaultParameterResolver } from '../../src/conversation/resolver.js';
import type { ResolveInput, ResolveOutcome } from '../../src/conversation/resolver-api.js';
import type { CapabilitySpec, JsonObject, PluginConfig } from '../../src/protocol/types.js';
import { buyCapability, recordWith, system } from './buy-fixture.js';

const resolver = new DefaultParameterResolver();

function resolveBuy(
  parts: { config?: PluginConfig; explicit?: JsonObject; profile?: JsonObject; confirmed?: string[] },
  capability: CapabilitySpec = buyCapability(),
): ResolveOutcome {
  const input: ResolveInput = {
    record: recordWith(parts.config ?? {}, [capability]),
    capability,
    explicit: parts.explicit ?? {},
    confirmed: parts.confirmed,
    profile: parts.profile ?? {},
    system,
  };
  return resolver.resolve(input);
}

function sources(outcome: ResolveOutcome): Record<string, string> {
  return Object.fromEntries(outcome.values.map((v) => [v.name, v.source]));
}

function asAsk(outcome: ResolveOutcome): Extract<ResolveOutcome, { status: 'ask' }> {
  if (outcome.status !== 'ask') throw new Error(`expected ask, got ${JSON.stringify(outcome)}`);
  return outcome;
}

function asReady(outcome: ResolveOutcome): Extract<ResolveOutcome, { status: 'ready' }> {
  if (outcome.status !== 'ready') throw new Error(`expected ready, got ${JSON.stringify(outcome)}`);
  return outcome;
}

describe('parameter dialogue flows at resolver level', () => {
  it('preset config with use_defaults_directly runs without asking', () => {
    const outcome = asReady(
      resolveBuy({
        config: {
          default_parameters: { address: '123 Main St', contact_name: 'John', phone: '555-0000' },
          use_defaults_directly: true,
        },
        explicit: { item: 'milk' },
      }),
    );
    expect(outcome.parameters).toEqual({ item: 'milk', address: '123 Main St', phone: '555-0000', contact_name: 'John' });
    expect(sources(outcome)).toEqual({ item: 'explicit', address: 'config', phone: 'config', contact_name: 'config' });
  });

  it('without use_defaults_directly: config values marked confirm_if_uncertain are confirmed first', () => {
    const outcome = asAsk(
      resolveBuy({
        config: { default_parameters: { address: '123 Main St', contact_name: 'John', phone: '555-0000' } },
        explicit: { item: 'milk' },
      }),
    );
    expect(outcome.missing).toEqual([]);
    expect(outcome.uncertain.map((v) => [v.name, v.value, v.source])).toEqual([
      ['address', '123 Main St', 'config'],
      ['phone', '555-0000', 'config'],
    ]);
    expect(outcome.question).toContain('I have your address as "123 Main St" and phone as "555-0000" (from the plugin settings)');
  });

  it('profile plus one missing value asks only for the missing phone', () => {
    const capability = buyCapability();
    // Address is not marked for confirmation here, so only the phone is asked for.
    capability.parameters = capability.parameters.map((p) => (p.name === 'address' ? { ...p, confirm_if_uncertain: false } : p));
    const profile = { name: 'John', address: '123 Main St' };
    const first = asAsk(resolveBuy({ explicit: { item: 'milk' }, profile }, capability));
    expect(first.missing.map((p) => p.name)).toEqual(['phone']);
    expect(first.uncertain).toEqual([]);
    expect(first.question).toBe('To place order I need phone (Contact phone number). Reply with the value, or "cancel".');

    const second = asReady(resolveBuy({ explicit: { item: 'milk', phone: '555-1234' }, profile }, capability));
    expect(second.parameters).toEqual({ item: 'milk', address: '123 Main St', phone: '555-1234', contact_name: 'John' });
    expect(sources(second)).toMatchObject({ phone: 'explicit', address: 'profile', contact_name: 'profile' });
  });

  it('with the real manifest: one question covers the missing phone and the address to confirm', () => {
    const profile = { name: 'John', address: '123 Main St' };
    const first = asAsk(resolveBuy({ explicit: { item: 'milk' }, profile }));
    expect(first.missing.map((p) => p.name)).toEqual(['phone']);
    expect(first.uncertain.map((v) => v.name)).toEqual(['address']);
    expect(first.question).toContain('phone (Contact phone number)');
    expect(first.question).toContain('I have your address as "123 Main St" (from your profile)');

    const second = asReady(resolveBuy({ explicit: { item: 'milk', phone: '555-1234' }, confirmed: ['address'], profile }));
    expect(second.parameters.address).toBe('123 Main St');
    expect(sources(second)).toMatchObject({ address: 'confirmed', phone: 'explicit', contact_name: 'profile' });
  });

  it('profile values needing confirmation are shown, then confirmed', () => {
    const profile = { name: 'John', address: '123 Main St', phone: '555-0000' };
    const first = asAsk(resolveBuy({ explicit: { item: 'milk' }, profile }));
    expect(first.missing).toEqual([]);
    expect(first.invalid).toEqual([]);
    expect(first.uncertain.map((v) => v.name)).toEqual(['address', 'phone']);
    expect(first.question).toBe(
      'I have your address as "123 Main St" and phone as "555-0000" (from your profile). Is that correct? ' +
        'Reply "yes", or give the correct values (e.g. address=...).',
    );
    expect(first.values.map((v) => v.name)).toEqual(['item', 'address', 'phone', 'contact_name']);

    const confirmed = asReady(resolveBuy({ explicit: { item: 'milk' }, confirmed: ['address', 'phone'], profile }));
    expect(confirmed.parameters).toEqual({ item: 'milk', address: '123 Main St', phone: '555-0000', contact_name: 'John' });
    expect(sources(confirmed)).toEqual({ item: 'explicit', address: 'confirmed', phone: 'confirmed', contact_name: 'profile' });
  });

  it('corrected values replace the profile ones', () => {
    const profile = { name: 'John', address: '123 Main St', phone: '555-0000' };
    const corrected = asReady(resolveBuy({ explicit: { item: 'milk', address: '456 Oak Ave', phone: '555-1234' }, profile }));
    expect(corrected.parameters).toMatchObject({ address: '456 Oak Ave', phone: '555-1234', contact_name: 'John' });
    expect(sources(corrected)).toMatchObject({ address: 'explicit', phone: 'explicit' });
  });

  it('correcting one value still asks to confirm the other', () => {
    const profile = { name: 'John', address: '123 Main St', phone: '555-0000' };
    const outcome = asAsk(resolveBuy({ explicit: { item: 'milk', address: '456 Oak Ave' }, profile }));
    expect(outcome.uncertain.map((v) => v.name)).toEqual(['phone']);
    expect(outcome.question).toContain('phone as "555-0000"');
    expect(outcome.question).not.toContain('123 Main St');
  });

  it('everything missing gives one question listing all of them with descriptions', () => {
    const outcome = asAsk(resolveBuy({ explicit: { item: 'milk' } }));
    expect(outcome.missing.map((p) => p.name)).toEqual(['address', 'phone', 'contact_name']);
    expect(outcome.question).toBe(
      'To place order I need address (Delivery address), phone (Contact phone number) and contact_name (Recipient name). ' +
        'Reply with the values (e.g. address=... phone=... contact_name=...), or "cancel".',
    );
    const then = asReady(resolveBuy({ explicit: { item: 'milk', address: '123 Oak Ave', phone: '555-1234', contact_name: 'John' } }));
    expect(then.parameters).toEqual({ item: 'milk', address: '123 Oak Ave', phone: '555-1234', contact_name: 'John' });
  });

  it('missing item too: nothing from the message means item is asked for', () => {
    const outcome = asAsk(resolveBuy({ profile: { name: 'John' } }));
    expect(outcome.missing.map((p) => p.name)).toEqual(['item', 'address', 'phone']);
  });
});

describe('blank values', () => {
  it('treats whitespace-only explicit values as missing and falls back to the next source', () => {
    const outcome = asAsk(resolveBuy({ explicit: { item: '   ', address: '\t\n', contact_name: '' }, profile: { name: 'John' } }));
    expect(outcome.missing.map((p) => p.name)).toEqual(['item', 'address', 'phone']);
    expect(sources(outcome)).toEqual({ contact_name: 'profile' });
  });

  it('treats whitespace-only or null profile and config values as missing', () => {
    const outcome = asAsk(
      resolveBuy({
        explicit: { item: 'milk' },
        profile: { name: '  ', phone: null },
        config: { default_parameters: { address: ' ' }, use_defaults_directly: true },
      }),
    );
    expect(outcome.missing.map((p) => p.name)).toEqual(['address', 'phone', 'contact_name']);
  });

  it('leaves an optional parameter out when nothing provides it', () => {
    const outcome = asReady(resolveBuy({ explicit: { item: 'milk', address: 'a', phone: 'p', contact_name: 'n', payment_method: ' ' } }));
    expect(outcome.parameters).not.toHaveProperty('payment_method');
  });
});

describe('config sources', () => {
  it('per-capability default_parameters win over plugin-level ones', () => {
    const outcome = asReady(
      resolveBuy({
        explicit: { item: 'milk' },
        config: {
          default_parameters: { address: 'Plugin St', phone: '555-0000', contact_name: 'John', payment_method: 'cash' },
          capabilities: { place_order: { default_parameters: { address: 'Capability St' } } },
          use_defaults_directly: true,
        },
      }),
    );
    expect(outcome.parameters).toMatchObject({ address: 'Capability St', payment_method: 'cash' });
  });

  it('finds values by config_key: inside default_parameters and as a top-level config entry', () => {
    const byDefaults = asReady(
      resolveBuy({
        explicit: { item: 'milk', phone: '1', contact_name: 'J' },
        config: { default_parameters: { default_address: 'Keyed St' }, use_default_directly_for: ['address'] },
      }),
    );
    expect(byDefaults.parameters.address).toBe('Keyed St');
    const topLevel = asReady(
      resolveBuy({
        explicit: { item: 'milk', phone: '1', contact_name: 'J' },
        config: { default_address: 'Top St', use_default_directly_for: ['address'] },
      }),
    );
    expect(topLevel.parameters.address).toBe('Top St');
  });

  it('use_default_directly_for trusts only the listed parameters', () => {
    const outcome = asAsk(
      resolveBuy({
        explicit: { item: 'milk' },
        config: {
          default_parameters: { address: '123 Main St', phone: '555-0000', contact_name: 'John' },
          use_default_directly_for: ['address', 'contact_name'],
        },
      }),
    );
    expect(outcome.uncertain.map((v) => v.name)).toEqual(['phone']);
    expect(outcome.question).toContain('phone as "555-0000" (from the plugin settings)');
    expect(outcome.question).not.toContain('123 Main St');
  });

  it('use_defaults_directly covers config values only: profile values are still confirmed', () => {
    const outcome = asAsk(
      resolveBuy({
        explicit: { item: 'milk' },
        profile: { address: 'Profile Rd' },
        config: {
          default_parameters: { address: 'Config St', phone: '555-0000', contact_name: 'John' },
          use_defaults_directly: true,
          use_default_directly_for: ['address'],
        },
      }),
    );
    // Profile comes before config in the resolution order, so its value is the one shown for confirmation.
    expect(outcome.uncertain.map((v) => [v.name, v.value, v.source])).toEqual([['address', 'Profile Rd', 'profile']]);
  });

  it("a parameter's own default is used last and never needs confirmation", () => {
    const capability = buyCapability();
    capability.parameters = capability.parameters.map((p) => (p.name === 'payment_method' ? { ...p, default: 'cash', confirm_if_uncertain: true } : p));
    const outcome = asReady(resolveBuy({ explicit: { item: 'milk', address: 'a', phone: 'p', contact_name: 'n' } }, capability));
    expect(outcome.parameters.payment_method).toBe('cash');
    expect(sources(outcome).payment_method).toBe('default');
  });
});

const kitchen: CapabilitySpec = {
  id: 'configure',
  name: 'Configure',
  description: 'A capability with every parameter type.',
  post_process: false,
  parameters: [
    { name: 'quantity', type: 'number', required: true, description: 'How many.' },
    { name: 'count', type: 'integer', required: false },
    { name: 'gift', type: 'boolean', required: false },
    { name: 'tags', type: 'array', required: false, items: { type: 'string' } },
    { name: 'options', type: 'object', required: false },
    { name: 'size', type: 'string', required: false, enum: ['small', 'large'] },
    { name: 'when', type: 'string', required: false, system_key: 'datetime' },
    { name: 'where', type: 'string', required: false, system_key: 'location' },
    { name: 'who', type: 'string', required: false, system_key: 'user_id' },
  ],
};

describe('coercion in the resolver', () => {
  it('coerces text to each declared type', () => {
    const outcome = asReady(
      resolveBuy(
        {
          explicit: { quantity: '42', count: '7', gift: 'yes', tags: 'milk, bread', options: '{"fast": true}', size: 'LARGE' },
        },
        kitchen,
      ),
    );
    expect(outcome.parameters).toMatchObject({
      quantity: 42,
      count: 7,
      gift: true,
      tags: ['milk', 'bread'],
      options: { fast: true },
      size: 'large',
    });
  });

  it('refuses "abc" for a number with the reason and asks again', () => {
    const outcome = asAsk(resolveBuy({ explicit: { quantity: 'abc', count: '2.5', size: 'huge' } }, kitchen));
    expect(outcome.invalid).toEqual([
      { name: 'quantity', value: 'abc', reason: 'must be a number' },
      { name: 'count', value: '2.5', reason: 'must be a whole number' },
      { name: 'size', value: 'huge', reason: 'must be one of: "small", "large"' },
    ]);
    expect(outcome.missing).toEqual([]);
    expect(outcome.question).toContain('"abc" is not a valid quantity: it must be a number.');
    expect(outcome.question).toContain('quantity (How many)');
    expect(outcome.values.map((v) => v.name)).not.toContain('quantity');
  });

  it('drops explicit keys that are not parameters of the capability', () => {
    const outcome = asReady(resolveBuy({ explicit: { quantity: 1, injected: 'rm -rf /' } }, kitchen));
    expect(outcome.parameters).not.toHaveProperty('injected');
  });
});

describe('system keys', () => {
  it('fills system_key parameters from the request context', () => {
    const outcome = asReady(resolveBuy({ explicit: { quantity: 1 } }, kitchen));
    expect(outcome.parameters).toMatchObject({ when: system.datetime, where: 'Paris', who: 'alice' });
    expect(sources(outcome)).toMatchObject({ when: 'system', where: 'system', who: 'system' });
  });

  it('lets the message name a location but never another user', () => {
    const outcome = asReady(resolveBuy({ explicit: { quantity: 1, where: 'Tokyo', who: 'mallory' } }, kitchen));
    expect(outcome.parameters).toMatchObject({ where: 'Tokyo', who: 'alice' });
  });
});

describe('llmVisibleParameters', () => {
  const names = (config: PluginConfig, capability = buyCapability()): string[] =>
    resolver.llmVisibleParameters(recordWith(config, [capability]), capability).map((p) => p.name);

  it('shows everything when nothing is trusted', () => {
    expect(names({ default_parameters: { address: '123 Main St' } })).toEqual(['item', 'address', 'phone', 'contact_name', 'payment_method']);
  });

  it('hides parameters in use_default_directly_for that have a config value', () => {
    // phone is listed but has no value in config, so the model must still be able to pass it.
    expect(names({ default_parameters: { address: '123 Main St' }, use_default_directly_for: ['address', 'phone'] })).toEqual([
      'item',
      'phone',
      'contact_name',
      'payment_method',
    ]);
  });

  it('hides every parameter with a config value under use_defaults_directly, per capability too', () => {
    expect(
      names({
        default_parameters: { phone: '555-0000', contact_name: 'John' },
        capabilities: { place_order: { default_parameters: { address: '123 Main St' } } },
        use_defaults_directly: true,
      }),
    ).toEqual(['item', 'payment_method']);
  });

  it('hides system_key parameters the Core always fills, but keeps location', () => {
    expect(names({}, kitchen)).toEqual(['quantity', 'count', 'gift', 'tags', 'options', 'size', 'where']);
  });
});
