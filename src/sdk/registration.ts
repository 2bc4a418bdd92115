// Sends the registration and waits for the Core's verdict on registered/<id> (or on
// registered/_invalid, where the Core answers registrations whose id it could not accept, tagged with
// the client id so each client recognises its own rejection).
import type { RegisterMessage, RegistrationAck, ValidationIssue } from '../protocol/types.js';
import { errorMessage } from '../kit/error-message.js';

/** refused: the Core said no (retrying will not help); unanswered: timeout, not sent, or cancelled. */
export type RegistrationOutcome = { ok: true } | { ok: false; refused: boolean; errors: ValidationIssue[] };

export interface RegistrationDeps {
  clientId: string;
  /** Built afresh for every attempt so it always carries the current descriptor. */
  message: () => RegisterMessage;
  publish(message: RegisterMessage): Promise<void>;
}

interface Waiter {
  resolve: (outcome: RegistrationOutcome) => void;
  timer: NodeJS.Timeout;
}

export class Registration {
  private waiters: Waiter[] = [];

  constructor(private readonly deps: RegistrationDeps) {}

  /**
   * Publishes the registration and resolves with the next ack. Every call publishes: a second message
   * is how a registration lost to a restarting Core gets through, and the Core treats a repeated
   * registration from its owner as an update.
   */
  register(timeoutMs: number): Promise<RegistrationOutcome> {
    return new Promise<RegistrationOutcome>((resolve) => {
      const waiter: Waiter = {
        resolve,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          resolve({
            ok: false,
            refused: false,
            errors: [{ path: '', message: `no registration ack from the Core within ${timeoutMs} ms` }],
          });
        }, timeoutMs),
      };
      this.waiters.push(waiter);
      this.deps.publish(this.deps.message()).catch((error: unknown) => {
        clearTimeout(waiter.timer);
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve({
          ok: false,
          refused: false,
          errors: [{ path: '', message: `could not publish the registration: ${errorMessage(error)}` }],
        });
      });
    });
  }

  /** An ack on registered/<our id>. */
  onAck(ack: RegistrationAck): void {
    this.settle(ack.ok ? { ok: true } : { ok: false, refused: true, errors: ack.errors ?? [{ path: '', message: 'registration refused' }] });
  }

  /** An ack on registered/_invalid: ours only when it names our client id. */
  onInvalidAck(ack: RegistrationAck): void {
    if (ack.client_id !== this.deps.clientId) return;
    this.settle({ ok: false, refused: true, errors: ack.errors ?? [{ path: '', message: 'registration refused' }] });
  }

  /** Fails every waiting registration, e.g. on close. */
  cancel(reason: string): void {
    this.settle({ ok: false, refused: false, errors: [{ path: '', message: reason }] });
  }

  private settle(outcome: RegistrationOutcome): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(outcome);
    }
  }
}
