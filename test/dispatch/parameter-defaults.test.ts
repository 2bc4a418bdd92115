// withParameterDefaults: the same precedence as the conversation's resolver (per-capability
// default_parameters, then plugin-level, then a top-level config_key entry, then the manifest default),
// applied only to what the call left out.
import { describe, expect, it } from 'vitest';
import { withParameterDefaults } from '../../src/dispatch/parameter-defaults.js';
import type { CapabilitySpec, PluginConfig } from '../../src/protocol/types.js';

const placeOrder: CapabilitySpec = {
  id: 'place_order',
  name: 'Place order',
  description: 'Place a delivery order.',
  post_process: false,
  parameters: [
    { name: 'item', type: 'string', required: true },
    { name: 'address', type: 'string', required: true, profile_key: 'address', config_key: 'default_address', confirm_if_uncertain: true },
    { name: 'contact_name', type: 'string', required: true, profile_key: 'name' },
    { name: 'payment_method', type: 'string', required: false, config_key: 'payment_method' },
    { name: 'quantity', type: 'integer', required: false, default: 1 },
  ],
};

// A config.yml with plugin-level and per-capability presets, as a user writes it.
const seedConfig: PluginConfig = {
  default_parameters: { address: '123 Main St, City', contact_name: 'John', payment_method: 'card' },
  capabilities: { place_order: { default_parameters: { address: '123 Main St' } } },
};

describe('withParameterDefaults', () => {
  it('fills what the call left out: per-capability first, then plugin-level, then the manifest default', () => {
    expect(withParameterDefaults(seedConfig, placeOrder, { item: 'milk' })).toEqual({
      item: 'milk',
      address: '123 Main St',
      contact_name: 'John',
      payment_method: 'card',
      quantity: 1,
    });
  });

  it('never replaces a given value, not even an empty one', () => {
    expect(withParameterDefaults(seedConfig, placeOrder, { item: 'milk', address: '9 Elm St', quantity: 3, contact_name: '' })).toMatchObject({
      address: '9 Elm St',
      quantity: 3,
      contact_name: '',
    });
  });

  it('reads a top-level config entry named by config_key; reserved config keys are never parameter values', () => {
    expect(withParameterDefaults({ default_address: '5 Oak Rd' }, placeOrder, { item: 'tea' })).toMatchObject({ address: '5 Oak Rd' });
    const odd: CapabilitySpec = { ...placeOrder, parameters: [{ name: 'limit', type: 'integer', required: false, config_key: 'queue_limit' }] };
    expect(withParameterDefaults({ queue_limit: 5 }, odd, {})).toEqual({});
  });

  it('returns the given object untouched when there is nothing to fill', () => {
    const params = { item: 'milk', address: 'a', contact_name: 'b', payment_method: 'cash', quantity: 2 };
    expect(withParameterDefaults(seedConfig, placeOrder, params)).toBe(params);
    const empty = {};
    const bare: CapabilitySpec = { ...placeOrder, parameters: [{ name: 'x', type: 'string', required: true }] };
    expect(withParameterDefaults({}, bare, empty)).toBe(empty);
  });

  it('copies default values, so a plugin changing its parameters cannot change the config', () => {
    const config: PluginConfig = { default_parameters: { tags: ['a'] } };
    const capability: CapabilitySpec = { ...placeOrder, parameters: [{ name: 'tags', type: 'array', required: false }] };
    const filled = withParameterDefaults(config, capability, {});
    (filled['tags'] as string[]).push('b');
    expect(config.default_parameters).toEqual({ tags: ['a'] });
  });
});
