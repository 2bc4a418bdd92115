// The client side of an MCP stdio connection, in our own hands rather than the SDK's
// StdioClientTransport because the Core needs three things that one does not give:
// the child runs in its own process group so stopping it also stops anything it spawned (npx, shells),
// the exit code and the tail of stderr are kept to explain a crash, and non-JSON-RPC lines on stdout are
// reported with a snippet instead of vanishing.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { buildChildEnv } from './child-env.js';

export interface StdioServerSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const MAX_LINE_BYTES = 16 * 1024 * 1024;
const STDERR_TAIL_CHARS = 2000;
const SNIPPET_CHARS = 120;

export class McpStdioClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private buffer = '';
  private stderrTail = '';
  private exited: ProcessExit | undefined;
  private closed: Promise<void> | undefined;
  private garbageLines = 0;
  private firstGarbage: string | undefined;

  constructor(
    private readonly spec: StdioServerSpec,
    private readonly onStderrLine?: (line: string) => void,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get exit(): ProcessExit | undefined {
    return this.exited;
  }

  get stderr(): string {
    return this.stderrTail;
  }

  /** How many stdout lines were not JSON-RPC, and the first of them (usually the most telling: a banner). */
  get garbage(): { count: number; first?: string } {
    return { count: this.garbageLines, ...(this.firstGarbage ? { first: this.firstGarbage } : {}) };
  }

  /** "exited (code 1)" / "exited (signal SIGKILL)", plus the stderr tail when there is one. */
  describeExit(): string {
    const exit = this.exited;
    const how = exit ? (exit.signal ? `signal ${exit.signal}` : `code ${exit.code ?? 'unknown'}`) : 'code unknown';
    const tail = this.stderrTail.trim().split('\n').slice(-3).join(' | ');
    return `exited (${how})${tail ? `; stderr: ${tail.slice(-400)}` : ''}`;
  }

  start(): Promise<void> {
    if (this.child) throw new Error('MCP stdio transport already started');
    // "node" means this very Node binary: the PATH may hold another one, or none.
    const command = this.spec.command === 'node' ? process.execPath : this.spec.command;
    return new Promise((resolve, reject) => {
      const child = spawn(command, this.spec.args, {
        // The minimal child environment plus what the manifest sets: Core secrets stay in the Core.
        env: buildChildEnv(this.spec.env),
        cwd: this.spec.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        shell: false,
      });
      this.child = child;
      let spawned = false;
      this.closed = new Promise((resolveClosed) => child.once('close', () => resolveClosed()));
      child.once('spawn', () => {
        spawned = true;
        resolve();
      });
      child.on('error', (error: NodeJS.ErrnoException) => {
        const explained =
          error.code === 'ENOENT' ? new Error(`command not found: ${this.spec.command}`) : new Error(`cannot start ${this.spec.command}: ${error.message}`);
        if (!spawned) reject(explained);
        else this.onerror?.(explained);
      });
      child.once('exit', (code, signal) => {
        this.exited = { code, signal };
      });
      child.once('close', (code, signal) => {
        this.exited ??= { code, signal };
        this.onclose?.();
      });
      child.stdin?.on('error', (error) => this.onerror?.(new Error(`MCP server stdin: ${error.message}`)));
      child.stdout?.setEncoding('utf8');
      child.stdout?.on('data', (chunk: string) => this.readStdout(chunk));
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => {
        this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
        if (this.onStderrLine) for (const line of chunk.split('\n')) if (line.trim()) this.onStderrLine(line);
      });
    });
  }

  private readStdout(chunk: string): void {
    this.buffer += chunk;
    if (this.buffer.length > MAX_LINE_BYTES) {
      this.buffer = '';
      this.onerror?.(new Error(`MCP server wrote more than ${MAX_LINE_BYTES} bytes without a newline; stopping it`));
      void this.close();
      return;
    }
    let newline = this.buffer.indexOf('\n');
    while (newline !== -1) {
      const line = this.buffer.slice(0, newline).replace(/\r$/, '');
      this.buffer = this.buffer.slice(newline + 1);
      if (line.trim()) this.handleLine(line);
      newline = this.buffer.indexOf('\n');
    }
  }

  private handleLine(line: string): void {
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(line));
    } catch {
      this.garbageLines += 1;
      const snippet = line.slice(0, SNIPPET_CHARS);
      this.firstGarbage ??= snippet;
      this.onerror?.(new Error(`MCP server wrote a line to stdout that is not JSON-RPC: "${snippet}"`));
      return;
    }
    this.onmessage?.(message);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin?.writable || this.exited) {
        reject(new Error('MCP server is not running'));
        return;
      }
      if (stdin.write(`${JSON.stringify(message)}\n`)) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      // Negative pid: the whole process group the child leads (spawned detached).
      process.kill(-pid, signal);
    } catch {
      try {
        this.child?.kill(signal);
      } catch {
        // already gone
      }
    }
  }

  /** Ends stdin, then SIGTERM, then SIGKILL to the whole group; resolves once the child is gone. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || !this.closed) return;
    const waitClosed = (ms: number): Promise<boolean> =>
      Promise.race([this.closed!.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
    if (!this.exited) {
      try {
        child.stdin?.end();
      } catch {
        // ignore: the process may already be gone
      }
      if (!(await waitClosed(300))) {
        this.signalGroup('SIGTERM');
        if (!(await waitClosed(1500))) {
          this.signalGroup('SIGKILL');
          await waitClosed(1500);
        }
      }
    }
    // Children of the server (if it spawned any) may outlive it: make sure the group is gone.
    this.signalGroup('SIGKILL');
    await waitClosed(1500);
  }
}
