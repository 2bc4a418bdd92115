// A real Mosquitto for tests: generated config in a temp dir, a free loopback port, started as a child
// process, ready once it accepts TCP connections, stopped (and its temp dir removed) by stop().
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

export interface MosquittoOptions {
  /** Default: a free port. */
  port?: number;
  /** Default true when no users are given. */
  allowAnonymous?: boolean;
  /** username → password, written with mosquitto_passwd. */
  users?: Record<string, string>;
  /** Contents of an ACL file (Mosquitto acl_file syntax). */
  acl?: string;
  /** Extra lines appended to mosquitto.conf. */
  extraConfig?: string;
  /** Milliseconds to wait for the listener. */
  startTimeoutMs?: number;
}

export interface MosquittoHandle {
  port: number;
  url: string;
  dir: string;
  /** Everything Mosquitto logged so far (stderr and stdout), for failure messages. */
  output(): string;
  /** Stops the process (SIGTERM, then SIGKILL after 5 s); the config stays for start(). */
  kill(): Promise<void>;
  /** Starts it again on the same port with the same config. */
  start(): Promise<void>;
  /** kill() then start(): a broker restart as a plugin or the Core would see it. */
  restart(): Promise<void>;
  /** Stops the process and removes the temp dir. */
  stop(): Promise<void>;
}

const MOSQUITTO = process.env.MOSQUITTO_BIN ?? '/usr/sbin/mosquitto';
const MOSQUITTO_PASSWD = process.env.MOSQUITTO_PASSWD_BIN ?? '/usr/bin/mosquitto_passwd';

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function startMosquitto(options: MosquittoOptions = {}): Promise<MosquittoHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'homeclaw-mosquitto-'));
  // Mosquitto started as root drops to the user named in its config; name ourselves so it can read the dir.
  chmodSync(dir, 0o755);
  const port = options.port ?? (await freePort());
  const users = options.users ?? {};
  const lines = [
    `listener ${port} 127.0.0.1`,
    `allow_anonymous ${String(options.allowAnonymous ?? Object.keys(users).length === 0)}`,
    'persistence false',
    'log_dest stderr',
    'log_type error',
    'log_type warning',
    'log_type notice',
    'log_type information',
    'connection_messages true',
    `user ${userInfo().username}`,
  ];
  if (Object.keys(users).length > 0) {
    const passwordFile = join(dir, 'passwords');
    writeFileSync(passwordFile, '');
    for (const [user, password] of Object.entries(users)) {
      execFileSync(MOSQUITTO_PASSWD, ['-b', passwordFile, user, password], { stdio: 'ignore' });
    }
    chmodSync(passwordFile, 0o600);
    lines.push(`password_file ${passwordFile}`);
  }
  if (options.acl !== undefined) {
    const aclFile = join(dir, 'acl');
    writeFileSync(aclFile, options.acl);
    chmodSync(aclFile, 0o600);
    lines.push(`acl_file ${aclFile}`);
  }
  if (options.extraConfig) lines.push(options.extraConfig);
  const configFile = join(dir, 'mosquitto.conf');
  writeFileSync(configFile, `${lines.join('\n')}\n`);

  let child: ChildProcess | undefined;
  let log = '';
  const timeoutMs = options.startTimeoutMs ?? 10_000;

  const start = async (): Promise<void> => {
    const proc = spawn(MOSQUITTO, ['-c', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    proc.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    proc.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        throw new Error(`mosquitto exited (${proc.exitCode ?? proc.signalCode}) before listening:\n${log}`);
      }
      if (await canConnect(port)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    proc.kill('SIGKILL');
    throw new Error(`mosquitto did not listen on ${port} within ${timeoutMs} ms:\n${log}`);
  };

  const kill = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };

  try {
    await start();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  return {
    port,
    url: `mqtt://127.0.0.1:${port}`,
    dir,
    output: () => log,
    kill,
    start,
    restart: async () => {
      await kill();
      await start();
    },
    stop: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
