import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BuiltinContext } from '../../src/adapters/builtin-module.js';
import { silentLogger } from '../../src/log.js';
import type { JsonObject } from '../../src/protocol/types.js';
import { listOrders, place_order } from '../../plugins/buy/index.js';

describe('buy plugin: place_order', () => {
  let dataDir: string;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-buy-'));
  });

  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  function ctx(requestId: string, params: JsonObject, signal = new AbortController().signal): BuiltinContext {
    return {
      data_dir: dataDir,
      log: silentLogger(),
      config: {},
      signal,
      notify: async () => ({ ok: false, error: 'no notifications in this test' }),
      request: {
        request_id: requestId,
        plugin_id: 'buy',
        capability_id: 'place_order',
        parameters: params,
        deadline: Date.now() + 10_000,
        user_id: 'alice',
        channel_name: 'cli',
      },
    };
  }

  const order = { item: 'milk', address: '123 Main St', phone: '555-0000', contact_name: 'John', payment_method: 'card' };

  it('records the order in SQLite and answers with text and data', async () => {
    expect(listOrders(dataDir)).toEqual([]);
    const result = await place_order(order, ctx('req-1', order));
    expect(typeof result).toBe('object');
    const { text, data } = result as { text: string; data: JsonObject };
    expect(text).toMatch(/^Order placed for milk: delivery to 123 Main St for John \(phone 555-0000\), paying by card\./);
    const orders = listOrders(dataDir);
    expect(orders).toHaveLength(1);
    expect(orders[0]).toMatchObject({ ...order, user_id: 'alice', channel: 'cli', request_id: 'req-1' });
    expect(data).toMatchObject({ order_id: orders[0]!.order_id, item: 'milk' });
  });

  it('places one order per request id, even when a request is delivered twice', async () => {
    await place_order(order, ctx('req-1', order));
    const again = (await place_order(order, ctx('req-1', order))) as { data: JsonObject };
    await place_order({ ...order, item: 'bread', payment_method: '' }, ctx('req-2', order));
    const orders = listOrders(dataDir);
    expect(orders.map((o) => [o.item, o.payment_method])).toEqual([
      ['milk', 'card'],
      ['bread', null],
    ]);
    expect(again.data.order_id).toBe(orders[0]!.order_id);
  });

  it('asks for missing values instead of recording an incomplete order', async () => {
    const result = await place_order({ item: 'milk', address: '  ' }, ctx('req-3', {}));
    expect(result).toEqual({
      success: false,
      ask_user: true,
      missing_parameters: ['address', 'phone', 'contact_name'],
      text: 'To place the order I still need: address, phone, contact_name.',
    });
    expect(listOrders(dataDir)).toEqual([]);
  });

  it('records nothing when the call was already cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await place_order(order, ctx('req-4', order, controller.signal));
    expect(result).toMatchObject({ success: false });
    expect(listOrders(dataDir)).toEqual([]);
  });
});
