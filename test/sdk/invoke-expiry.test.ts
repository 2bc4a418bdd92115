// The SDK's deadline over MQTT 5: the request's absolute deadline assumes synchronised clocks; the
// message's remaining expiry is relative, so it bounds the deadline and rescues a request that a plugin
// clock running ahead would otherwise drop as late. The traceparent user property reaches the handler.
import { describe, expect, it } from 'vitest';
import type { CapabilitySpec, PluginResult } from '../../src/protocol/types.js';
import { silentSdkLogger } from '../../src/sdk/default-logger.js';
import { effectiveDeadline, InvocationRunner } from '../../src/sdk/invocation-runner.js';
import { ParameterValidator } from '../../src/sdk/parameter-validator.js';
import type { HandlerContext, PluginStats } from '../../src/sdk/types.js';

const capability: CapabilitySpec = { id: 'echo', name: 'echo', description: 'echo', parameters: [], post_process: false };

function runner(): { runner: InvocationRunner; contexts: HandlerContext[]; results: PluginResult[]; stats: PluginStats } {
  const contexts: HandlerContext[] = [];
  const results: PluginResult[] = [];
  const stats: PluginStats = { connects: 0, registrations: 0, heartbeats: 0, invocations: 0, succeeded: 0, failed: 0, refused: 0, dropped: 0, late: 0 };
  const instance = new InvocationRunner({
    pluginId: 'p',
    capabilities: [capability],
    handlers: { echo: (_params, context) => void contexts.push(context) },
    parameters: new ParameterValidator([capability]),
    max_concurrency: 1,
    max_payload_bytes: 65_536,
    log: silentSdkLogger(),
    stats,
    publishResult: async (result) => void results.push(result),
  });
  return { runner: instance, contexts, results, stats };
}

const request = (deadline: number, id = 'r1'): Buffer =>
  Buffer.from(JSON.stringify({ request_id: id, plugin_id: 'p', capability_id: 'echo', parameters: {}, deadline }));

async function settled(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('the handler deadline with MQTT 5 message expiry', () => {
  it('is the earlier of the request deadline and the remaining expiry', () => {
    expect(effectiveDeadline(100_000, 1_000, 5)).toBe(6_000);
    expect(effectiveDeadline(3_000, 1_000, 5)).toBe(3_000);
    expect(effectiveDeadline(3_000, 1_000, undefined)).toBe(3_000);
  });

  it('runs a request the broker still delivered although its absolute deadline looks past (plugin clock ahead)', async () => {
    const { runner: r, contexts, stats } = runner();
    const now = Date.now();
    r.onInvoke(request(now - 60_000), { messageExpiryInterval: 4 });
    await settled();
    expect(contexts).toHaveLength(1);
    expect(contexts[0]!.deadline).toBeGreaterThan(now);
    expect(contexts[0]!.deadline).toBeLessThanOrEqual(Date.now() + 4_000);
    // Without the expiry (3.1.1) the same request is dropped as late.
    r.onInvoke(request(now - 60_000, 'r2'));
    await settled();
    expect(contexts).toHaveLength(1);
    expect(stats.dropped).toBe(1);
  });

  it('gives the handler the traceparent user property, and none for a malformed one', async () => {
    const { runner: r, contexts } = runner();
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    r.onInvoke(request(Date.now() + 10_000, 'a'), { messageExpiryInterval: 10, userProperties: { traceparent } });
    r.onInvoke(request(Date.now() + 10_000, 'b'), { userProperties: { traceparent: 'nonsense' } });
    await settled();
    expect(contexts.map((c) => c.traceparent)).toEqual([traceparent, undefined]);
    expect(contexts[1]!.deadline).toBe(contexts[1]!.request.deadline);
  });
});
