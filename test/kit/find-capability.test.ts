import { describe, expect, it } from 'vitest';
import { findCapability } from '../../src/kit/find-capability.js';

const descriptor = { capabilities: [{ id: 'on' }, { id: 'off' }] };

describe('findCapability', () => {
  it('finds a capability by id', () => {
    expect(findCapability(descriptor, 'off')).toEqual({ id: 'off' });
  });

  it("reads no id, undefined or empty, as the plugin's first capability", () => {
    expect(findCapability(descriptor, undefined)).toEqual({ id: 'on' });
    expect(findCapability(descriptor, '')).toEqual({ id: 'on' });
  });

  it('gives undefined for an unknown id and for a plugin without capabilities', () => {
    expect(findCapability(descriptor, 'dim')).toBeUndefined();
    expect(findCapability({ capabilities: [] }, undefined)).toBeUndefined();
  });
});
