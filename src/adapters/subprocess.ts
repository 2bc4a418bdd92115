// The adapter for plugins that are a command (type 'subprocess'): one process per
// call, one PluginRequest JSON line on stdin, one PluginResult on stdout. The process runs in its own
// process group so that at the deadline (or on shutdown) the whole tree is killed, grandchildren too.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { Logger } from '../log.js';
import type { PluginResult } from '../protocol/types.js';
import type { AdapterCall, PluginAdapter } from './adapter.js';
import { buildChildEnv, manifestEnvOf } from './child-env.js';
import { clip, failure, looksLikeResult, parseTextualAnswer, textResult, tryParseJson, coerceResult } from './plugin-result.js';
import { errorMessage } from '../kit/error-message.js';

export interface SubprocessAdapterOptions {
  log: Logger;
  /** stdout and stderr are each capped at this many bytes; a process writing more is killed (default 1 MiB). */
  max_output_bytes?: number;
  /** After SIGTERM, how long a process group gets before SIGKILL (default 1000 ms). */
  kill_grace_ms?: number;
}

export interface SubprocessAdapter extends PluginAdapter {
  /** Process ids of the calls running now (tests, status). */
  running(): number[];
}

interface Running {
  child: ChildProcess;
  kill: (why: string) => void;
}

export function createSubprocessAdapter(options: SubprocessAdapterOptions): SubprocessAdapter {
  const log = options.log;
  const maxBytes = options.max_output_bytes ?? 1024 * 1024;
  const graceMs = options.kill_grace_ms ?? 1000;
  const running = new Set<Running>();

  function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
    if (child.pid === undefined) return;
    try {
      // Negative pid: the whole process group the child leads (it was spawned detached).
      process.kill(-child.pid, signal);
    } catch {
      try {
        child.kill(signal);
      } catch {
        /* already gone */
      }
    }
  }

  function invoke(call: AdapterCall): Promise<PluginResult> {
    const { record, request, signal } = call;
    const id = record.descriptor.id;
    const config = record.descriptor.config;
    const command = typeof config.command === 'string' ? config.command.trim() : '';
    if (!command) return Promise.resolve(failure(request, `plugin ${id} has no config.command`, 'adapter_error'));
    const args = Array.isArray(config.args) ? config.args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))) : [];
    const pluginDir = typeof config.plugin_dir === 'string' ? config.plugin_dir : undefined;
    const cwd =
      typeof config.cwd === 'string'
        ? isAbsolute(config.cwd) || !pluginDir
          ? resolve(config.cwd)
          : resolve(pluginDir, config.cwd)
        : (pluginDir ?? process.cwd());
    if (!isDirectory(cwd)) return Promise.resolve(failure(request, `plugin ${id}: working directory not found: ${cwd}`, 'adapter_error'));
    // Never the Core's own environment: it holds the Core's secrets.
    const env = buildChildEnv(manifestEnvOf(config.env));
    if (signal.aborted) return Promise.resolve(failure(request, `call to ${id} was cancelled before it started`, 'cancelled'));

    return new Promise<PluginResult>((resolvePromise) => {
      let settled = false;
      let killedFor: { why: string; code: 'timeout' | 'cancelled' | 'plugin_error' } | undefined;
      let killTimer: NodeJS.Timeout | undefined;
      const stdout: Buffer[] = [];
      const stderr: Buffer[] = [];
      let stdoutBytes = 0;
      let stderrBytes = 0;

      let child: ChildProcess;
      try {
        child = spawn(command, args, { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
      } catch (err) {
        resolvePromise(failure(request, `plugin ${id}: could not start ${command}: ${errorMessage(err)}`, 'adapter_error'));
        return;
      }

      const entry: Running = {
        child,
        kill: (why) => {
          if (!killedFor) killedFor = { why, code: 'cancelled' };
          killGroup(child, 'SIGTERM');
          killTimer ??= setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
          killTimer.unref();
        },
      };
      running.add(entry);

      const finish = (result: PluginResult): void => {
        if (settled) return;
        settled = true;
        running.delete(entry);
        signal.removeEventListener('abort', onAbort);
        if (killTimer) clearTimeout(killTimer);
        // Anything of the group still alive after a kill (a grandchild that ignored SIGTERM) goes now.
        if (killedFor) killGroup(child, 'SIGKILL');
        resolvePromise(result);
      };

      const onAbort = (): void => {
        const reason = signal.reason instanceof Error ? signal.reason.message : 'deadline reached';
        killedFor = { why: reason, code: /did not answer|deadline|timed? ?out/i.test(reason) ? 'timeout' : 'cancelled' };
        entry.kill(reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });

      const collect = (target: Buffer[], which: 'stdout' | 'stderr') => (chunk: Buffer) => {
        if (which === 'stdout') stdoutBytes += chunk.length;
        else stderrBytes += chunk.length;
        const size = which === 'stdout' ? stdoutBytes : stderrBytes;
        if (size > maxBytes) {
          if (!killedFor) {
            killedFor = { why: `it wrote more than ${maxBytes} bytes to ${which}`, code: 'plugin_error' };
            entry.kill(killedFor.why);
          }
          return;
        }
        target.push(chunk);
      };
      child.stdout!.on('data', collect(stdout, 'stdout'));
      child.stderr!.on('data', collect(stderr, 'stderr'));
      // A process that exits without reading stdin makes our write fail with EPIPE: not an error of ours.
      child.stdin!.on('error', () => undefined);

      child.on('error', (err: NodeJS.ErrnoException) => {
        const message =
          err.code === 'ENOENT'
            ? `command not found: ${command}`
            : err.code === 'EACCES'
              ? `command is not executable: ${command}`
              : `could not start ${command}: ${err.message}`;
        finish(failure(request, `plugin ${id}: ${message}`, 'adapter_error'));
      });

      child.on('close', (code, exitSignal) => {
        const out = Buffer.concat(stdout).toString('utf8');
        const err = clip(Buffer.concat(stderr).toString('utf8'), 2000);
        if (killedFor) {
          const what = killedFor.code === 'plugin_error' ? `plugin ${id} was killed: ${killedFor.why}` : `plugin ${id} was killed: ${killedFor.why}`;
          finish(failure(request, what, killedFor.code));
          return;
        }
        finish(interpret(request, id, out, err, code, exitSignal));
      });

      if (child.pid !== undefined) log.debug({ plugin_id: id, pid: child.pid, command }, 'subprocess started');
      child.stdin!.end(`${JSON.stringify(request)}\n`);
    });
  }

  return {
    type: 'subprocess',
    invoke,
    async health(record) {
      const config = record.descriptor.config;
      const command = typeof config.command === 'string' ? config.command.trim() : '';
      if (!command) return { ok: false, detail: `plugin ${record.descriptor.id} has no config.command` };
      const pluginDir = typeof config.plugin_dir === 'string' ? config.plugin_dir : undefined;
      const found = findExecutable(command, pluginDir);
      // A one-shot command has no process to probe: healthy means it can be started.
      return found ? { ok: true, detail: `command found: ${found}` } : { ok: false, detail: `command not found: ${command}` };
    },
    running() {
      return [...running].map((r) => r.child.pid).filter((pid): pid is number => pid !== undefined);
    },
    async stop() {
      const all = [...running];
      for (const entry of all) entry.kill('the Core is shutting down');
      // Give them the grace period to close, so no orphan outlives the Core.
      await Promise.all(
        all.map(
          (entry) =>
            new Promise<void>((done) => {
              if (entry.child.exitCode !== null || entry.child.signalCode !== null) return done();
              const timer = setTimeout(done, graceMs + 500);
              entry.child.once('close', () => {
                clearTimeout(timer);
                done();
              });
            }),
        ),
      );
    },
  };
}

function findExecutable(command: string, pluginDir: string | undefined): string | undefined {
  const candidates = command.includes('/')
    ? [isAbsolute(command) ? command : resolve(pluginDir ?? process.cwd(), command)]
    : (process.env.PATH ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, command));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Turns a finished process's output into a result: stdout as one PluginResult JSON (else its last line,
 * a plugin may log before it answers); no output, or raw text from a failed process, is a plugin_error.
 */
function interpret(
  request: AdapterCall['request'],
  id: string,
  stdout: string,
  stderr: string,
  code: number | null,
  exitSignal: NodeJS.Signals | null,
): PluginResult {
  const out = stdout.trim();
  const exit = exitSignal ? `was killed by ${exitSignal}` : `exited with code ${code}`;
  if (!out) {
    return failure(request, stderr ? `plugin ${id} ${exit} without output: ${stderr}` : `plugin ${id} ${exit} without output`, 'plugin_error');
  }
  // The whole stdout as JSON, else its last line (a plugin may log before it answers).
  let answer = tryParseJson(out);
  if (!answer.ok) {
    const lines = out
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    const last = lines[lines.length - 1];
    if (last) {
      const parsed = tryParseJson(last);
      if (parsed.ok && looksLikeResult(parsed.value)) answer = parsed;
    }
  }
  if (answer.ok && looksLikeResult(answer.value)) return coerceResult(request, answer.value);
  if (code !== 0 || exitSignal) {
    // Raw text from a failed process is its error, not an answer.
    return failure(request, `plugin ${id} ${exit}: ${clip(stderr || out, 2000)}`, 'plugin_error');
  }
  return answer.ok ? parseTextualAnswer(request, out) : textResult(request, out);
}
