// Ending a plugin host together with everything it started. The host leads its own process group (it is
// spawned detached), so one signal to the group reaches the usual children; a child that left the group
// (setsid, start_new_session) is found through /proc before the signal and signalled on its own, because
// once the host is gone such an orphan is re-parented and can no longer be traced back to it.
import { readdirSync, readFileSync } from 'node:fs';

/** Every live descendant of `pid` (Linux /proc); empty where /proc is not available. */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // the process ended while we looked
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/** Signals the process group `pid` leads and each listed process (those that may have left the group). */
export function signalTree(pid: number, extra: number[], sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    signal(pid, sig);
  }
  for (const other of extra) signal(other, sig);
}
