// A small Dockerfile reader for tests: instructions grouped by stage, line continuations joined,
// comments dropped, ARG defaults substituted in FROM, and the argument forms tests need (COPY flags,
// ENV pairs, exec-form JSON arrays). Not a full implementation of the Dockerfile syntax.

export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

export interface Stage {
  name: string | undefined;
  image: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  /** ARGs declared before the first FROM, with their defaults. */
  globalArgs: Map<string, string>;
  stages: Stage[];
}

export function parseDockerfile(text: string): Dockerfile {
  const instructions: Instruction[] = [];
  let pending = '';
  let startLine = 0;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trimEnd();
    if (pending === '' && (line.trim() === '' || line.trim().startsWith('#'))) return;
    if (pending !== '' && line.trim().startsWith('#')) return;
    if (pending === '') startLine = index + 1;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      return;
    }
    const full = `${pending}${line}`.trim();
    pending = '';
    const match = /^(\S+)\s*(.*)$/.exec(full);
    if (match) instructions.push({ keyword: match[1]!.toUpperCase(), args: match[2]!.trim(), line: startLine });
  });
  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const [image = '', as, name] = instruction.args.split(/\s+/);
      const resolved = image.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a: string | undefined, b: string | undefined) => globalArgs.get((a ?? b) as string) ?? '');
      stages.push({ name: as?.toUpperCase() === 'AS' ? name : undefined, image: resolved, instructions: [] });
    } else if (stages.length === 0) {
      if (instruction.keyword === 'ARG') {
        const [key, value = ''] = instruction.args.split('=');
        globalArgs.set(key!.trim(), value.trim());
      }
    } else {
      stages[stages.length - 1]!.instructions.push(instruction);
    }
  }
  return { globalArgs, stages };
}

export interface CopyInstruction {
  from: string | undefined;
  sources: string[];
  destination: string;
}

export function parseCopy(args: string): CopyInstruction {
  const parts = args.split(/\s+/);
  let from: string | undefined;
  while (parts[0]?.startsWith('--')) {
    const flag = parts.shift() as string;
    if (flag.startsWith('--from=')) from = flag.slice('--from='.length);
  }
  const destination = parts.pop() as string;
  return { from, sources: parts, destination };
}

/** ENV KEY=value KEY2=value2 (values without spaces) or the legacy ENV KEY value. */
export function parseEnv(args: string): Record<string, string> {
  if (!args.includes('=')) {
    const [key, ...rest] = args.split(/\s+/);
    return { [key as string]: rest.join(' ') };
  }
  const out: Record<string, string> = {};
  for (const pair of args.split(/\s+/)) {
    const eq = pair.indexOf('=');
    out[pair.slice(0, eq)] = pair.slice(eq + 1).replace(/^"(.*)"$/, '$1');
  }
  return out;
}

/** The exec form of CMD / ENTRYPOINT / HEALTHCHECK CMD: a JSON array of strings. */
export function parseExecForm(args: string): string[] {
  const value = JSON.parse(args) as unknown;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new Error(`not an exec form: ${args}`);
  return value;
}

export function instructionsOf(stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter((i) => i.keyword === keyword);
}
