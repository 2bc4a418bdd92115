// Reading a /metrics answer the way Prometheus does: parsed by the official Prometheus Python client's
// text-format parser (Debian's python3-prometheus-client, run by /usr/bin/python3), and linted by
// `promtool check metrics` (Debian's prometheus). The npm parser parse-prometheus-text-format merges the
// series of a labelled histogram into one and drops their sums and counts, so it cannot check ours.
import { execFile } from 'node:child_process';

export interface Sample {
  /** The sample's own name: with _total, _bucket, _sum or _count where the type has them. */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  /** The family name as the parser reports it (a counter's without _total). */
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'info' | 'stateset' | 'gaugehistogram' | 'unknown';
  help: string;
  samples: Sample[];
}

const PARSE = `
import json, math, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for family in text_string_to_metric_families(sys.stdin.read()):
    samples = []
    for s in family.samples:
        v = s.value
        samples.append({"name": s.name, "labels": s.labels, "value": v if math.isfinite(v) else repr(v)})
    out.append({"name": family.name, "type": family.type, "help": family.documentation, "samples": samples})
json.dump(out, sys.stdout)
`;

function run(command: string, args: string[], input: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, args, { maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') reject(error);
      else resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
    });
    child.stdin?.end(input);
  });
}

export class Exposition {
  constructor(readonly families: Family[]) {}

  family(name: string): Family {
    const found = this.families.find((f) => f.name === name);
    if (!found) throw new Error(`no metric family ${name}; families: ${this.families.map((f) => f.name).join(', ')}`);
    return found;
  }

  has(name: string): boolean {
    return this.families.some((f) => f.name === name);
  }

  /** Samples named `sample` whose labels include `labels`. */
  samples(sample: string, labels: Record<string, string> = {}): Sample[] {
    const out: Sample[] = [];
    for (const family of this.families) {
      for (const s of family.samples) {
        if (s.name === sample && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) out.push(s);
      }
    }
    return out;
  }

  /** The value of the one sample with exactly these labels (le excluded unless given); undefined when absent. */
  value(sample: string, labels: Record<string, string> = {}): number | undefined {
    const matches = this.samples(sample, labels).filter((s) => Object.keys(s.labels).length === Object.keys(labels).length);
    if (matches.length > 1) throw new Error(`${sample} ${JSON.stringify(labels)} matches ${matches.length} samples`);
    return matches[0]?.value;
  }

  /** Every label value of every sample, for checks that nothing personal became a label. */
  labelValues(): string[] {
    return this.families.flatMap((f) => f.samples.flatMap((s) => Object.values(s.labels)));
  }
}

/** Parses Prometheus text exposition with the official parser; rejects on a parse error. */
export async function parseExposition(text: string): Promise<Exposition> {
  const { code, stdout, stderr } = await run('/usr/bin/python3', ['-c', PARSE], text);
  if (code !== 0) throw new Error(`the Prometheus parser refused the exposition: ${stderr}`);
  const families = JSON.parse(stdout) as (Omit<Family, 'samples'> & { samples: (Omit<Sample, 'value'> & { value: number | string })[] })[];
  return new Exposition(
    families.map((f) => ({
      ...f,
      samples: f.samples.map((s) => ({ ...s, value: typeof s.value === 'number' ? s.value : Number(s.value.replace('inf', 'Infinity')) })),
    })),
  );
}

/**
 * `promtool check metrics`: parse errors fail (exit 1); lint findings (exit 3) come back one per line,
 * e.g. `x_total non-counter metrics should not have "_total" suffix`.
 */
export async function promtoolLint(text: string): Promise<string[]> {
  const { code, stdout, stderr } = await run('promtool', ['check', 'metrics'], text);
  if (code !== 0 && code !== 3) throw new Error(`promtool check metrics failed (${code}): ${stderr}${stdout}`);
  return `${stdout}${stderr}`
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}
