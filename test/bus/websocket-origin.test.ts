import { describe, expect, it } from 'vitest';
import { mayOpenMqttWebSocket } from '../../src/bus/websocket-origin.js';

const none = new Set<string>();

describe('mayOpenMqttWebSocket', () => {
  it('lets clients without an origin in (MQTT libraries)', () => {
    expect(mayOpenMqttWebSocket(undefined, '127.0.0.1:9001', none)).toBe(true);
  });

  it('refuses a web page of any other origin, and lets listed origins in (case-insensitive)', () => {
    expect(mayOpenMqttWebSocket('https://evil.example', '127.0.0.1:9001', none)).toBe(false);
    expect(mayOpenMqttWebSocket('http://127.0.0.1:8765', '127.0.0.1:9001', none)).toBe(false);
    expect(mayOpenMqttWebSocket('null', '127.0.0.1:9001', none)).toBe(false);
    expect(mayOpenMqttWebSocket('HTTPS://Panel.Home.Lan', '127.0.0.1:9001', new Set(['https://panel.home.lan']))).toBe(true);
  });

  it("accepts paho's own-address origin for an IP address or localhost, never for a name (DNS rebinding)", () => {
    expect(mayOpenMqttWebSocket('https://127.0.0.1:9001', '127.0.0.1:9001', none)).toBe(true);
    expect(mayOpenMqttWebSocket('https://192.168.1.5:9001', '192.168.1.5:9001', none)).toBe(true);
    expect(mayOpenMqttWebSocket('https://[::1]:9001', '[::1]:9001', none)).toBe(true);
    expect(mayOpenMqttWebSocket('https://localhost:9001', 'localhost:9001', none)).toBe(true);
    expect(mayOpenMqttWebSocket('http://attacker.example:9001', 'attacker.example:9001', none)).toBe(false);
    expect(mayOpenMqttWebSocket('https://127.0.0.1:9002', '127.0.0.1:9001', none)).toBe(false);
    expect(mayOpenMqttWebSocket('https://127.0.0.1:9001', undefined, none)).toBe(false);
  });
});
