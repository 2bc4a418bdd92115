// One running Python plugin host: spawns /usr/bin/python3 with the host script in the plugin's folder (its
// own process group, a minimal environment), performs the init → hello handshake, sends invocations and
// matches results to them by request id, forwards the host's stderr to the Core's log, and ends the whole
// process tree on stop. It never restarts anything: the supervisor decides that.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Logger } from '../../log.js';
import { findPackageRoot } from '../../kit/package-root.js';
import { descendantsOf, signalTree } from './process-tree.js';
import { parseHostLine, type CoreToHost, type HostHello, type HostInit, type HostInvoke, type HostResult } from './protocol.js';
import { errorMessage } from '../../kit/error-message.js';

/** The host script shipped with the package (plain Python, standard library only). */
export const HOST_SCRIPT = join(findPackageRoot(), 'src', 'bridges', 'python', 'host', 'homeclaw_python_host.py');

const MAX_LINE_CHARS = 16 * 1024 * 1024;
const STDERR_TAIL_CHARS = 4000;
const LOG_LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);

export interface HostLaunchSpec {
  python: string;
  cwd: string;
  env: Record<string, string>;
  init: HostInit;
  startup_timeout_ms: number;
  log: Logger;
}

export type LaunchOutcome = { ok: true; process: PythonHostProcess; hello: HostHello } | { ok: false; error: string };

export type InvokeOutcome =
  | { kind: 'result'; result: HostResult }
  /** The process ended (crashed, was stopped) before it answered. */
  | { kind: 'lost'; reason: string }
  /** The caller's signal fired: the call was cancelled and is abandoned. */
  | { kind: 'aborted' };

interface Pending {
  settle(outcome: InvokeOutcome): void;
  deadline: number;
  abandoned: boolean;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

export class PythonHostProcess {
  readonly startedAt = Date.now();
  /** Called once when the process has ended; `expected` is true when stop() ended it. */
  onExit: ((reason: string, expected: boolean) => void) | undefined;
  private readonly pending = new Map<string, Pending>();
  private readonly closed: Promise<void>;
  private buffer = '';
  private stderrTail = '';
  private exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private stopping: Promise<void> | undefined;
  private retiring = false;
  private retireTimer: NodeJS.Timeout | undefined;
  private firstMessage: ((line: ReturnType<typeof parseHostLine>) => void) | undefined;

  private constructor(
    private readonly child: ChildProcess,
    private readonly log: Logger,
  ) {
    this.closed = new Promise((resolve) => child.once('close', () => resolve()));
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => this.readStdout(chunk));
    child.stderr!.setEncoding('utf8');
    let partial = '';
    child.stderr!.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) this.readStderr(line);
    });
    // A host that exits while we write makes the write fail with EPIPE: the exit handler explains it.
    child.stdin!.on('error', () => undefined);
    child.on('error', (err) => log.debug({ err: err.message }, 'Python host process error'));
    child.once('close', (code, signal) => {
      if (partial) this.readStderr(partial);
      this.exited = { code, signal };
      clearTimeout(this.retireTimer);
      const reason = this.describeExit();
      for (const [id, entry] of [...this.pending]) {
        this.pending.delete(id);
        entry.settle({ kind: 'lost', reason });
      }
      this.firstMessage?.({ ok: false, problem: reason });
      this.onExit?.(reason, this.stopping !== undefined);
    });
  }

  /** Starts a host and waits for its hello (or its failure to load). */
  static launch(spec: HostLaunchSpec): Promise<LaunchOutcome> {
    return new Promise((resolve) => {
      let child: ChildProcess;
      try {
        child = spawn(spec.python, ['-B', HOST_SCRIPT], { cwd: spec.cwd, env: spec.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
      } catch (err) {
        resolve({ ok: false, error: `cannot start ${spec.python}: ${errorMessage(err)}` });
        return;
      }
      const host = new PythonHostProcess(child, spec.log);
      let done = false;
      const finish = (outcome: LaunchOutcome): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        host.firstMessage = undefined;
        // A host that failed to start is gone, with everything it started, before the failure is reported.
        if (outcome.ok) resolve(outcome);
        else void host.stop().then(() => resolve(outcome));
      };
      const timer = setTimeout(
        () => finish({ ok: false, error: `the Python host did not start within ${spec.startup_timeout_ms} ms (an import that never finishes?)` }),
        spec.startup_timeout_ms,
      );
      child.once('error', (err: NodeJS.ErrnoException) => {
        const error = err.code === 'ENOENT' ? `Python interpreter not found: ${spec.python}` : `cannot start ${spec.python}: ${err.message}`;
        finish({ ok: false, error });
      });
      host.firstMessage = (parsed) => {
        if (!parsed.ok) return finish({ ok: false, error: host.exited ? `the Python host ${parsed.problem}` : `the Python host answered ${parsed.problem}` });
        const message = parsed.message;
        if (message.type === 'hello') return finish({ ok: true, process: host, hello: message });
        if (message.type === 'fatal') return finish({ ok: false, error: message.error });
        finish({ ok: false, error: 'the Python host answered before it said hello' });
      };
      host.send(spec.init);
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get alive(): boolean {
    return this.exited === undefined;
  }

  /** Calls that still wait for their answer (abandoned ones do not count). */
  liveCalls(): number {
    let count = 0;
    for (const entry of this.pending.values()) if (!entry.abandoned) count++;
    return count;
  }

  /** True while the host has not answered this call (even if the caller gave up on it). */
  isRunning(requestId: string): boolean {
    return this.pending.has(requestId);
  }

  invoke(message: Omit<HostInvoke, 'type'>, signal: AbortSignal): Promise<InvokeOutcome> {
    if (!this.alive || this.stopping) return Promise.resolve({ kind: 'lost', reason: this.exited ? this.describeExit() : 'the Python host is stopping' });
    if (this.pending.has(message.id)) return Promise.resolve({ kind: 'lost', reason: `request ${message.id} is already running` });
    if (signal.aborted) return Promise.resolve({ kind: 'aborted' });
    return new Promise((resolve) => {
      let settled = false;
      const entry: Pending = {
        deadline: message.deadline,
        abandoned: false,
        settle: (outcome) => {
          if (settled) return;
          settled = true;
          signal.removeEventListener('abort', onAbort);
          resolve(outcome);
        },
      };
      const onAbort = (): void => {
        entry.abandoned = true;
        this.send({ type: 'cancel', id: message.id });
        entry.settle({ kind: 'aborted' });
        this.checkRetired();
      };
      this.pending.set(message.id, entry);
      signal.addEventListener('abort', onAbort, { once: true });
      this.send({ type: 'invoke', ...message });
    });
  }

  /** Takes no new calls; ends once the calls still running have answered (at the latest at their deadlines). */
  retire(): void {
    if (this.retiring) return;
    this.retiring = true;
    const deadlines = [...this.pending.values()].filter((e) => !e.abandoned).map((e) => e.deadline);
    const latest = deadlines.length > 0 ? Math.max(...deadlines) : Date.now();
    this.retireTimer = setTimeout(() => void this.stop(), Math.max(0, latest - Date.now()) + 1000);
    this.retireTimer.unref();
    this.checkRetired();
  }

  /** "exited (code 1); stderr: …" — how the process ended and the end of what it wrote to stderr. */
  describeExit(): string {
    const exit = this.exited;
    const how = !exit ? 'is running' : exit.signal ? `was killed by ${exit.signal}` : `exited (code ${exit.code ?? 'unknown'})`;
    const tail = this.stderrTail.trim().split('\n').slice(-3).join(' | ');
    return `${how}${tail ? `; stderr: ${tail.slice(-500)}` : ''}`;
  }

  /** Ends the host and everything it started: stdin closed, then SIGTERM, then SIGKILL to the whole tree. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      clearTimeout(this.retireTimer);
      const pid = this.child.pid;
      if (pid === undefined) return;
      const started = descendantsOf(pid);
      const waitClosed = (ms: number): Promise<boolean> => Promise.race([this.closed.then(() => true), sleep(ms).then(() => false)]);
      if (this.alive) {
        try {
          this.child.stdin!.end();
        } catch {
          // already closed
        }
        if (!(await waitClosed(300))) {
          signalTree(pid, started, 'SIGTERM');
          if (!(await waitClosed(1500))) {
            signalTree(pid, [...started, ...descendantsOf(pid)], 'SIGKILL');
            await waitClosed(1500);
          }
        }
      }
      // Children outlive a host that exits on its own; end them too so no orphan remains.
      signalTree(pid, started, 'SIGTERM');
      if (started.length > 0) await sleep(100);
      signalTree(pid, started, 'SIGKILL');
    })();
    return this.stopping;
  }

  private send(message: CoreToHost): void {
    const stdin = this.child.stdin;
    if (!stdin?.writable) return;
    stdin.write(`${JSON.stringify(message)}\n`);
  }

  private checkRetired(): void {
    if (this.retiring && this.liveCalls() === 0) void this.stop();
  }

  private readStdout(chunk: string): void {
    this.buffer += chunk;
    if (this.buffer.length > MAX_LINE_CHARS) {
      this.buffer = '';
      this.log.error({ host_pid: this.pid }, `the Python host wrote more than ${MAX_LINE_CHARS} characters without a newline; stopping it`);
      void this.stop();
      return;
    }
    let newline = this.buffer.indexOf('\n');
    while (newline !== -1) {
      const line = this.buffer.slice(0, newline).trim();
      this.buffer = this.buffer.slice(newline + 1);
      if (line) this.handleLine(line);
      newline = this.buffer.indexOf('\n');
    }
  }

  private handleLine(line: string): void {
    const parsed = parseHostLine(line);
    if (this.firstMessage) return this.firstMessage(parsed);
    if (!parsed.ok) {
      this.log.warn({ host_pid: this.pid, problem: parsed.problem }, 'the Python host wrote a line that is not a protocol message');
      return;
    }
    const message = parsed.message;
    if (message.type !== 'result') {
      this.log.warn({ host_pid: this.pid, type: message.type }, 'unexpected message from the Python host');
      return;
    }
    const entry = this.pending.get(message.id);
    if (!entry) {
      this.log.warn({ host_pid: this.pid, request_id: message.id }, 'the Python host answered a call it was not given');
      return;
    }
    this.pending.delete(message.id);
    if (entry.abandoned) this.log.debug({ host_pid: this.pid, request_id: message.id }, 'a cancelled call finished in the Python host');
    entry.settle({ kind: 'result', result: message });
    this.checkRetired();
  }

  private readStderr(line: string): void {
    if (!line.trim()) return;
    let text = line;
    if (line.startsWith('{"hclog"')) {
      try {
        const record = JSON.parse(line) as { level?: unknown; msg?: unknown; logger?: unknown };
        const level = record.level === 'warning' ? 'warn' : record.level === 'critical' ? 'fatal' : String(record.level);
        text = String(record.msg ?? '');
        this.log[LOG_LEVELS.has(level) ? (level as 'info') : 'info']({ host_pid: this.pid, logger: record.logger }, text);
      } catch {
        this.log.info({ host_pid: this.pid, stream: 'stderr' }, line);
      }
    } else {
      this.log.info({ host_pid: this.pid, stream: 'stderr' }, line);
    }
    this.stderrTail = `${this.stderrTail}${text}\n`.slice(-STDERR_TAIL_CHARS);
  }
}
