import { describe, expect, it } from 'vitest';
import { LoginConnections } from '../../src/bus/login-connections.js';
import { applyConfigDefaults } from '../../src/config/validate.js';

describe('LoginConnections', () => {
  it('counts connections per login, lets a replacement in at the limit, and gives places back once', () => {
    const connections = new LoginConnections<object>(2);
    const [a, b, c, d] = [{}, {}, {}, {}];
    expect(connections.take('lamp', a, false)).toBe(true);
    expect(connections.take('lamp', b, false)).toBe(true);
    expect(connections.take('lamp', c, false)).toBe(false);
    expect(connections.take('heater', c, false)).toBe(true);
    expect(connections.take('lamp', d, true)).toBe(true);
    expect(connections.held('lamp')).toBe(3);
    connections.release(a);
    connections.release(a);
    expect(connections.held('lamp')).toBe(2);
    expect(connections.take('lamp', {}, false)).toBe(false);
  });

  it('defaults to 256 connections per login in the configuration', () => {
    expect(applyConfigDefaults().broker.login.max_connections).toBe(256);
  });
});
