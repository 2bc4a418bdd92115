// `homeclaw chat` and `homeclaw send "<text>"`: a user's terminal on the MQTT channel topics. Replies are
// read from the channel's out topic and filtered to this user (and session), as any channel client would.
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { Command } from 'commander';
import mqtt, { type MqttClient } from 'mqtt';
import { topics } from '../protocol/topics.js';
import { isChannelId } from '../protocol/ids.js';
import type { ChannelMessageIn, ChannelMessageOut } from '../protocol/types.js';
import { errorMessage } from '../kit/error-message.js';

export interface ChatClientOptions {
  url: string;
  channel: string;
  user: string;
  session?: string;
  username?: string;
  password?: string;
  /** Seconds to wait for a reply (send) or to connect. */
  timeoutSec: number;
}

export const DEFAULT_MQTT_URL = 'mqtt://127.0.0.1:1883';

export function defaultChatOptions(env: NodeJS.ProcessEnv = process.env): ChatClientOptions {
  return {
    url: env.HOMECLAW_MQTT_URL || DEFAULT_MQTT_URL,
    channel: 'cli',
    user: env.USER || env.USERNAME || 'user',
    ...(env.HOMECLAW_MQTT_USERNAME ? { username: env.HOMECLAW_MQTT_USERNAME } : {}),
    ...(env.HOMECLAW_MQTT_PASSWORD ? { password: env.HOMECLAW_MQTT_PASSWORD } : {}),
    timeoutSec: 60,
  };
}

/** How a reply looks in the terminal: questions and errors are marked so the user knows what is expected. */
export function formatReply(reply: ChannelMessageOut): string {
  const marks: Partial<Record<ChannelMessageOut['kind'], string>> = { question: ' (question)', error: ' (error)', notification: ' (notification)' };
  const prefix = `homeclaw${marks[reply.kind] ?? ''}`;
  return `${prefix}> ${reply.text}`;
}

function parseReply(payload: Buffer): ChannelMessageOut | undefined {
  try {
    const value = JSON.parse(payload.toString('utf8')) as unknown;
    if (value === null || typeof value !== 'object') return undefined;
    const reply = value as Partial<ChannelMessageOut>;
    if (typeof reply.request_id !== 'string' || typeof reply.user_id !== 'string' || typeof reply.text !== 'string') return undefined;
    return { ...reply, kind: reply.kind ?? 'answer' } as ChannelMessageOut;
  } catch {
    return undefined;
  }
}

/** A connected channel client: send texts, receive this user's replies. */
export interface ChannelClient {
  send(text: string): string;
  onReply(listener: (reply: ChannelMessageOut) => void): void;
  close(): Promise<void>;
}

/** reconnect: keep retrying after a lost connection (chat); off for one-shot `send`, which fails fast. */
export async function connectChannelClient(options: ChatClientOptions, reconnect = true): Promise<ChannelClient> {
  if (!isChannelId(options.channel)) throw new Error(`invalid channel name "${options.channel}" (lowercase letters, digits, _ and -)`);
  const client: MqttClient = await mqtt.connectAsync(options.url, {
    clientId: `homeclaw-chat-${randomUUID().slice(0, 8)}`,
    connectTimeout: options.timeoutSec * 1000,
    reconnectPeriod: reconnect ? 1000 : 0,
    ...(options.username ? { username: options.username } : {}),
    ...(options.password ? { password: options.password } : {}),
  });
  const listeners: ((reply: ChannelMessageOut) => void)[] = [];
  const outTopic = topics.channelOut(options.channel);
  client.on('message', (topic, payload) => {
    if (topic !== outTopic) return;
    const reply = parseReply(payload);
    if (!reply || reply.user_id !== options.user) return;
    if (options.session !== undefined && reply.session_id !== undefined && reply.session_id !== options.session) return;
    for (const listener of listeners) listener(reply);
  });
  await client.subscribeAsync(outTopic, { qos: 1 });
  return {
    send(text) {
      const requestId = randomUUID();
      const message: ChannelMessageIn = {
        request_id: requestId,
        user_id: options.user,
        text,
        ...(options.session !== undefined ? { session_id: options.session } : {}),
        timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      };
      client.publish(topics.channelIn(options.channel), JSON.stringify(message), { qos: 1 });
      return requestId;
    },
    onReply(listener) {
      listeners.push(listener);
    },
    async close() {
      await client.endAsync();
    },
  };
}

/** Sends one message and prints the reply. Exit code: 0 answer/question, 1 error reply, 2 no reply in time. */
export async function runSend(text: string, options: ChatClientOptions, out: Writable = process.stdout, json = false): Promise<number> {
  const client = await connectChannelClient(options, false);
  try {
    const reply = await new Promise<ChannelMessageOut | undefined>((resolve) => {
      let requestId = '';
      const timer = setTimeout(() => resolve(undefined), options.timeoutSec * 1000);
      client.onReply((r) => {
        if (r.request_id === requestId) {
          clearTimeout(timer);
          resolve(r);
        }
      });
      requestId = client.send(text);
    });
    if (!reply) {
      out.write(`No reply within ${options.timeoutSec} s. Is the Core running at ${options.url}?\n`);
      return 2;
    }
    out.write(`${json ? JSON.stringify(reply) : formatReply(reply)}\n`);
    return reply.kind === 'error' ? 1 : 0;
  } finally {
    await client.close();
  }
}

export interface ChatIo {
  input: Readable;
  output: Writable;
  /** Diagnostics (the banner when not interactive, timeouts); default stderr. */
  errors?: Writable;
}

export interface ChatMode {
  /** Print each reply as one JSON line (the channel reply object) instead of text. */
  json?: boolean;
  /** Prompts and the banner on stdout; default: only when the input is a terminal and not --json. */
  interactive?: boolean;
}

/**
 * The conversation loop. Each line is sent only after the previous one was answered, so a piped script
 * ("buy me some milk", then "yes") reaches the Core in order, every answer is printed, and the command
 * ends after the last answer. Replies that answer nothing this terminal sent (a plugin's notification,
 * another session of the same user) are printed as they arrive. Ends on end of input or /quit.
 * Returns the exit code: 0, or 2 when the Core did not answer within the timeout.
 */
export async function runChat(options: ChatClientOptions, io: ChatIo = { input: process.stdin, output: process.stdout }, mode: ChatMode = {}): Promise<number> {
  const client = await connectChannelClient(options);
  const errors = io.errors ?? process.stderr;
  const interactive = mode.interactive ?? ((io.input as { isTTY?: boolean }).isTTY === true && !mode.json);
  const rl = createInterface({
    input: io.input,
    ...(interactive ? { output: io.output, terminal: (io.output as { isTTY?: boolean }).isTTY === true } : {}),
  });
  rl.setPrompt('you> ');
  const render = (reply: ChannelMessageOut): string => (mode.json ? JSON.stringify(reply) : formatReply(reply));
  const banner = `Connected to ${options.url} as ${options.user} on channel "${options.channel}". /help for commands, /quit to leave.\n`;
  (interactive ? io.output : errors).write(banner);

  let waiting: { requestId: string; resolve: (reply: ChannelMessageOut) => void } | undefined;
  client.onReply((reply) => {
    if (waiting && reply.request_id === waiting.requestId) {
      const { resolve } = waiting;
      waiting = undefined;
      resolve(reply);
      return;
    }
    if (!interactive) return void io.output.write(`${render(reply)}\n`);
    io.output.write(`\n${render(reply)}\n`);
    rl.prompt(true);
  });
  const ask = (text: string): Promise<ChannelMessageOut | undefined> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        waiting = undefined;
        resolve(undefined);
      }, options.timeoutSec * 1000);
      const requestId = client.send(text);
      // Set in the same tick as the publish: the reply cannot arrive before this line runs.
      waiting = {
        requestId,
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
      };
    });

  let exitCode = 0;
  try {
    if (interactive) rl.prompt();
    for await (const line of rl) {
      const text = line.trim();
      if (text === '/quit' || text === '/exit') break;
      if (text !== '') {
        const reply = await ask(text);
        if (!reply) {
          errors.write(`No reply within ${options.timeoutSec} s. Is the Core running at ${options.url}?\n`);
          exitCode = 2;
          break;
        }
        io.output.write(`${render(reply)}\n`);
      }
      if (interactive) rl.prompt();
    }
  } finally {
    rl.close();
    await client.close();
  }
  return exitCode;
}

function addConnectionOptions(command: Command): Command {
  return command
    .option('--url <url>', 'MQTT broker URL (env HOMECLAW_MQTT_URL)', process.env.HOMECLAW_MQTT_URL || DEFAULT_MQTT_URL)
    .option('--channel <name>', 'channel name', 'cli')
    .option('--user <id>', 'user id', process.env.USER || process.env.USERNAME || 'user')
    .option('--session <id>', 'session id')
    .option('--username <name>', 'MQTT username (env HOMECLAW_MQTT_USERNAME)')
    .option('--password <password>', 'MQTT password (env HOMECLAW_MQTT_PASSWORD)')
    .option('--timeout <sec>', 'seconds to wait for a reply', '60');
}

function optionsFrom(raw: Record<string, string | undefined>): ChatClientOptions {
  const defaults = defaultChatOptions();
  const timeout = Number(raw.timeout ?? defaults.timeoutSec);
  return {
    url: raw.url ?? defaults.url,
    channel: raw.channel ?? defaults.channel,
    user: raw.user ?? defaults.user,
    ...(raw.session ? { session: raw.session } : {}),
    ...((raw.username ?? defaults.username) ? { username: raw.username ?? defaults.username } : {}),
    ...((raw.password ?? defaults.password) ? { password: raw.password ?? defaults.password } : {}),
    timeoutSec: Number.isFinite(timeout) && timeout > 0 ? timeout : defaults.timeoutSec,
  };
}

/** Adds `chat` and `send` to the homeclaw program. */
export function registerChatCommands(program: Command): void {
  addConnectionOptions(program.command('chat').description('talk to HomeClaw in the terminal (MQTT channel topics); reads lines from a pipe too'))
    .option('--json', 'print each reply as one JSON line (the channel reply object)')
    .action(async (raw: Record<string, string | undefined> & { json?: boolean }) => {
      try {
        process.exitCode = await runChat(optionsFrom(raw), { input: process.stdin, output: process.stdout }, { json: raw.json === true });
      } catch (error) {
        process.stderr.write(`homeclaw chat: ${errorMessage(error)}\n`);
        process.exitCode = 1;
      }
    });
  addConnectionOptions(program.command('send').argument('<text>', 'the message').description('send one message and print the reply'))
    .option('--json', 'print the reply as JSON (the channel reply object)')
    .action(async (text: string, raw: Record<string, string | undefined> & { json?: boolean }) => {
      try {
        process.exitCode = await runSend(text, optionsFrom(raw), process.stdout, raw.json === true);
      } catch (error) {
        process.stderr.write(`homeclaw send: ${errorMessage(error)}\n`);
        process.exitCode = 1;
      }
    });
}
