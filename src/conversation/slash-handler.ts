// Answers a slash command: /help, /plugins (only those the user may reach), and a direct call
// `/<plugin> <capability> key=value`, which goes through the same parameter dialogue as any call.
import type { EngineContext } from './engine-context.js';
import type { ReplyBody, Turn } from './engine-types.js';
import { usageOf } from './no-llm-router.js';
import type { PendingDialogue } from './pending-dialogue.js';
import { parseSlashCommand, SLASH_USAGE } from './slash-commands.js';
import { findCapability } from '../kit/find-capability.js';

export async function answerSlashCommand(ctx: EngineContext, dialogue: PendingDialogue, turn: Turn): Promise<ReplyBody> {
  const command = parseSlashCommand(turn.text);
  switch (command.kind) {
    case 'invalid':
      return { text: command.message, kind: 'error' };
    case 'help':
      return {
        text: [
          'Commands:',
          `  ${SLASH_USAGE} — call a plugin directly (quote values with spaces: key="two words")`,
          '  /plugins — list the plugins and their capabilities',
          '  /help — this text',
          'Reply "cancel" to drop a pending question.',
          ctx.deps.llm ? 'Anything else goes to the language model.' : 'No language model is configured: other messages go to the best-matching plugin.',
        ].join('\n'),
        kind: 'answer',
      };
    case 'plugins': {
      const access = ctx.deps.access;
      const records = ctx.deps.registry.list().filter((record) => !access || access.mayReachPlugin(turn.message.user_id, record));
      if (records.length === 0) return { text: 'No plugins are registered.', kind: 'answer' };
      const lines = ['Plugins:'];
      for (const record of [...records].sort((a, b) => a.descriptor.id.localeCompare(b.descriptor.id))) {
        const state = record.state === 'online' ? '' : ` [${record.state}]`;
        lines.push(`- ${record.descriptor.id}${state}: ${record.descriptor.description}`);
        for (const capability of record.descriptor.capabilities) lines.push(`    ${usageOf(record.descriptor.id, capability)}`);
      }
      return { text: lines.join('\n'), kind: 'answer' };
    }
    case 'call': {
      const record = ctx.deps.registry.get(command.plugin_id);
      if (!record) return { text: `Unknown plugin "${command.plugin_id}". /plugins lists them.`, kind: 'error' };
      const capability = findCapability(record.descriptor, command.capability_id);
      if (!capability) {
        const ids = record.descriptor.capabilities.map((c) => c.id).join(', ') || 'none';
        return {
          text: `The plugin ${record.descriptor.id} has no capability "${command.capability_id}". Its capabilities: ${ids}.`,
          kind: 'error',
          plugin_id: record.descriptor.id,
        };
      }
      return (await dialogue.resolveAndInvoke(turn, record, capability, command.parameters, [], turn.text)).reply;
    }
  }
}
