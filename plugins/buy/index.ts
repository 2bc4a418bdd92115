// The built-in "buy" plugin: records delivery orders in SQLite (<data_dir>/buy-orders.db) so the
// parameter dialogue of the Core has a real effect to check. The Core's resolver has already asked for
// missing values and confirmed uncertain ones; this module still re-checks its inputs, because a plugin
// must never trust that every caller went through the Core's dialogue.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { BuiltinContext, BuiltinReturn } from '../../src/adapters/builtin-module.js';
import type { JsonObject } from '../../src/protocol/types.js';

export const ORDERS_DB_FILE = 'buy-orders.db';

const REQUIRED = ['item', 'address', 'phone', 'contact_name'] as const;

export interface Order {
  order_id: string;
  item: string;
  address: string;
  phone: string;
  contact_name: string;
  payment_method: string | null;
  user_id: string | null;
  channel: string | null;
  request_id: string;
  created_at: number;
}

function openOrders(dataDir: string): Database.Database {
  const db = new Database(join(dataDir, ORDERS_DB_FILE));
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 2000');
  db.exec(`
    CREATE TABLE IF NOT EXISTS orders (
      order_id TEXT PRIMARY KEY,
      item TEXT NOT NULL,
      address TEXT NOT NULL,
      phone TEXT NOT NULL,
      contact_name TEXT NOT NULL,
      payment_method TEXT,
      user_id TEXT,
      channel TEXT,
      request_id TEXT NOT NULL UNIQUE,
      created_at INTEGER NOT NULL
    );
  `);
  return db;
}

function text(params: JsonObject, name: string): string | undefined {
  const value = params[name];
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function describe(order: Order): string {
  const paying = order.payment_method ? `, paying by ${order.payment_method}` : '';
  return `Order placed for ${order.item}: delivery to ${order.address} for ${order.contact_name} (phone ${order.phone})${paying}. Order id ${order.order_id}.`;
}

/** Capability place_order: asks for any required value still missing (ask_user) instead of ordering without it. */
export async function place_order(params: JsonObject, ctx: BuiltinContext): Promise<BuiltinReturn> {
  const missing = REQUIRED.filter((name) => text(params, name) === undefined);
  if (missing.length > 0) {
    return {
      success: false,
      ask_user: true,
      missing_parameters: [...missing],
      text: `To place the order I still need: ${missing.join(', ')}.`,
    };
  }
  if (ctx.signal.aborted) return { success: false, error: 'The order was cancelled before it was placed.' };

  const db = openOrders(ctx.data_dir);
  try {
    // The request id is unique, so a retried delivery of the same request never places a second order.
    const existing = db.prepare('SELECT * FROM orders WHERE request_id = ?').get(ctx.request.request_id) as Order | undefined;
    if (existing) return { text: describe(existing), data: { ...existing } };
    const order: Order = {
      order_id: randomUUID(),
      item: text(params, 'item')!,
      address: text(params, 'address')!,
      phone: text(params, 'phone')!,
      contact_name: text(params, 'contact_name')!,
      payment_method: text(params, 'payment_method') ?? null,
      user_id: ctx.request.user_id ?? null,
      channel: ctx.request.channel_name ?? null,
      request_id: ctx.request.request_id,
      created_at: Date.now(),
    };
    db.prepare(
      `INSERT INTO orders (order_id, item, address, phone, contact_name, payment_method, user_id, channel, request_id, created_at)
       VALUES (@order_id, @item, @address, @phone, @contact_name, @payment_method, @user_id, @channel, @request_id, @created_at)`,
    ).run(order);
    ctx.log.info({ order_id: order.order_id, user_id: order.user_id }, 'order placed');
    return { text: describe(order), data: { ...order } };
  } finally {
    db.close();
  }
}

/** Every recorded order, oldest first (for tests and the CLI). */
export function listOrders(dataDir: string): Order[] {
  if (!existsSync(join(dataDir, ORDERS_DB_FILE))) return [];
  const db = openOrders(dataDir);
  try {
    return db.prepare('SELECT * FROM orders ORDER BY created_at, rowid').all() as Order[];
  } finally {
    db.close();
  }
}
