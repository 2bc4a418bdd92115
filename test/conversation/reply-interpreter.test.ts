import { describe, expect, it } from 'vitest';
import { newPendingCall } from '../../src/conversation/pending-store.js';
import { PatternReplyInterpreter } from '../../src/conversation/reply-interpreter.js';
import type { PendingCall, ReplyInterpretation } from '../../src/conversation/resolver-api.js';
import type { CapabilitySpec } from '../../src/protocol/types.js';
import { buyCapability } from './buy-fixture.js';

const interpreter = new PatternReplyInterpreter();
const buy = buyCapability();

function pending(missing: string[], uncertain: string[]): PendingCall {
  return newPendingCall(
    { plugin_id: 'buy', capability_id: 'place_order', explicit: { item: 'milk' }, missing, uncertain, question: 'q', user_input: 'buy milk' },
    0,
    60,
  );
}

const states = {
  uncertain2: pending([], ['address', 'phone']),
  uncertain1: pending([], ['address']),
  missing1: pending(['phone'], []),
  missing3: pending(['address', 'phone', 'contact_name'], []),
  mixed: pending(['phone'], ['address']),
};
type State = keyof typeof states;

const cancel: ReplyInterpretation = { kind: 'cancel' };
const unrelated: ReplyInterpretation = { kind: 'unrelated' };
const confirm = (values = {}): ReplyInterpretation => ({ kind: 'confirm', values });
const values = (v: Record<string, string>): ReplyInterpretation => ({ kind: 'values', values: v });

const table: [State, string, ReplyInterpretation][] = [
  // cancel
  ['uncertain2', 'cancel', cancel],
  ['missing1', 'Never mind', cancel],
  ['missing3', 'nevermind.', cancel],
  ['mixed', 'stop', cancel],
  ['uncertain1', 'Forget it!', cancel],
  ['uncertain1', 'please cancel the order', cancel],
  ['uncertain2', 'no', cancel],
  ['missing1', 'nope', cancel],
  // confirm
  ['uncertain2', 'yes', confirm()],
  ['uncertain2', 'Yep', confirm()],
  ['uncertain2', 'correct', confirm()],
  ['uncertain2', 'ok', confirm()],
  ['uncertain2', 'OK!', confirm()],
  ['uncertain2', 'confirm', confirm()],
  ['uncertain2', 'sure', confirm()],
  ['uncertain2', "that's right", confirm()],
  ['uncertain2', 'yes please, go ahead', confirm()],
  ['uncertain2', 'y', confirm()],
  ['uncertain2', 'yes, but address=456 Oak Ave', confirm({ address: '456 Oak Ave' })],
  ['uncertain2', 'yes but my phone is 555-1234', confirm({ phone: '555-1234' })],
  ['mixed', 'yes, 555-1234', confirm({ phone: '555-1234' })],
  ['mixed', 'yes', confirm()],
  ['uncertain2', 'yes, what is the weather?', unrelated],
  ['uncertain2', 'yesterday I bought bread', unrelated],
  // key = value
  ['missing3', 'address=456 Oak Ave phone=555-1234 contact_name=John', values({ address: '456 Oak Ave', phone: '555-1234', contact_name: 'John' })],
  ['missing3', 'address="12 Main St, Apt 3" phone=\'555 1234\'', values({ address: '12 Main St, Apt 3', phone: '555 1234' })],
  ['missing3', 'address = 1 Main St, City, phone = 555', values({ address: '1 Main St, City', phone: '555' })],
  ['missing1', 'phone=555-1234', values({ phone: '555-1234' })],
  ['uncertain2', 'address: 456 Oak Ave', values({ address: '456 Oak Ave' })],
  ['uncertain2', 'my phone is 555-1234', values({ phone: '555-1234' })],
  ['uncertain2', 'My phone number is 555-1234.', values({ phone: '555-1234' })],
  ['missing1', 'phone 555-1234', values({ phone: '555-1234' })],
  ['missing3', 'address 4 Elm St, phone 555-1234 and name Jo', values({ address: '4 Elm St', phone: '555-1234', contact_name: 'Jo' })],
  ['missing3', 'my name is John', values({ contact_name: 'John' })],
  ['missing3', 'contact name: John', values({ contact_name: 'John' })],
  ['uncertain2', 'Actually my address is 456 Oak Ave and my phone is 555-1234', values({ address: '456 Oak Ave', phone: '555-1234' })],
  ['uncertain1', 'item=bread', values({ item: 'bread' })],
  // bare answers
  ['missing1', '555-1234', values({ phone: '555-1234' })],
  ['missing1', "it's 555-1234", values({ phone: '555-1234' })],
  ['missing1', 'Will Smith', values({ phone: 'Will Smith' })],
  ['mixed', '555-1234', values({ phone: '555-1234' })],
  ['missing3', '123 Oak Ave, 555-1234, John', values({ address: '123 Oak Ave', phone: '555-1234', contact_name: 'John' })],
  ['missing3', "123 Oak Ave, 555-1234, I'm John", values({ address: '123 Oak Ave', phone: '555-1234', contact_name: 'John' })],
  ['missing3', '123 Oak Ave, 555-1234', unrelated],
  ['missing3', '123 Oak Ave, Springfield, 555-1234, John', unrelated],
  // corrections of uncertain values
  ['uncertain1', 'actually use 456 Oak Ave', values({ address: '456 Oak Ave' })],
  ['uncertain1', 'No, make it 456 Oak Ave.', values({ address: '456 Oak Ave' })],
  ['uncertain2', 'Actually use 456 Oak Ave, 555-1234', values({ address: '456 Oak Ave', phone: '555-1234' })],
  ['uncertain2', 'actually use 456 Oak Ave', unrelated],
  ['uncertain1', '456 Oak Ave', unrelated],
  ['mixed', 'actually use 456 Oak Ave', unrelated],
  // unrelated
  ['missing1', "what's the weather in Paris?", unrelated],
  ['missing1', 'what is the weather in Paris', unrelated],
  ['missing1', 'turn on the kitchen lights', unrelated],
  ['uncertain2', "what's the weather in Paris?", unrelated],
  ['missing3', 'tell me a joke', unrelated],
  ['uncertain2', 'stop the music', unrelated],
  ['uncertain2', 'I moved last week', unrelated],
  ['uncertain2', 'remind me to call mum, the address is on the fridge', unrelated],
  ['missing1', '   ', unrelated],
  ['missing1', 'x'.repeat(5000), unrelated],
];

describe('PatternReplyInterpreter', () => {
  it.each(table)('[%s] %j', (state, text, expected) => {
    expect(interpreter.interpret(states[state], buy, text)).toEqual(expected);
  });

  it('reads yes/no as the value when the single missing parameter is a boolean', () => {
    const capability: CapabilitySpec = {
      id: 'notify',
      name: 'Notify',
      description: 'd',
      post_process: false,
      parameters: [{ name: 'urgent', type: 'boolean', required: true }],
    };
    const call = pending(['urgent'], []);
    expect(interpreter.interpret(call, capability, 'yes')).toEqual({ kind: 'values', values: { urgent: true } });
    expect(interpreter.interpret(call, capability, 'no')).toEqual({ kind: 'values', values: { urgent: false } });
    expect(interpreter.interpret(call, capability, 'cancel')).toEqual({ kind: 'cancel' });
  });

  it('stays fast on long adversarial input', () => {
    const text = `${'address = , '.repeat(80)}phone`;
    const started = performance.now();
    interpreter.interpret(states.missing3, buy, text);
    expect(performance.now() - started).toBeLessThan(200);
  });
});
