// `npm run bench [-- suite...]`: runs the benchmark suites and prints their tables. Each suite measures
// its own baseline in the same run and reports ratios, because these machines are noisy.
import { cpus, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { runAccessBench } from './access.js';
import { runAdaptersBench } from './adapters.js';
import { runConversationBench } from './conversation.js';
import { runCoreBusBench } from './core-bus.js';
import { runMetricsBench } from './metrics.js';
import { runRetrievalQualityBench } from './retrieval-quality.js';
import { runRetrievalScaleBench } from './retrieval-scale.js';
import { runStallBench } from './stall.js';

type Suite = () => Promise<string>;

// `--rounds N`: rounds of the stall suite (default 2); `--no-rss` skips the 1,000-plugin memory steps
// of the stall and core suites; `--node-default-v8-pool` starts the stall suite's Core without the
// launchers' --v8-pool-size=1, for comparison.
const roundsFlag = process.argv.indexOf('--rounds');

// `--dataset DIR` points the retrieval suites at other data in the MetaTool layout.
const datasetFlag = process.argv.indexOf('--dataset');
const dataset = resolve(datasetFlag >= 0 ? (process.argv[datasetFlag + 1] ?? '') : '../shared/datasets/metatool');

const suites: Record<string, Suite> = {
  core: () => runCoreBusBench({ rss: !process.argv.includes('--no-rss') }),
  adapters: () => runAdaptersBench(),
  'retrieval-quality': () => runRetrievalQualityBench(dataset),
  'retrieval-scale': () => runRetrievalScaleBench(dataset),
  conversation: () => runConversationBench(),
  access: () => runAccessBench(),
  stall: () =>
    runStallBench({
      ...(roundsFlag >= 0 ? { rounds: Number(process.argv[roundsFlag + 1]) } : {}),
      rss: !process.argv.includes('--no-rss'),
      nodeDefaultV8Pool: process.argv.includes('--node-default-v8-pool'),
    }),
  metrics: () => runMetricsBench(),
};

async function main(): Promise<void> {
  const wanted = process.argv.slice(2).filter((a, i, all) => !a.startsWith('-') && all[i - 1] !== '--dataset' && all[i - 1] !== '--rounds');
  const names = wanted.length > 0 ? wanted : Object.keys(suites);
  const unknown = names.filter((n) => !suites[n]);
  if (unknown.length > 0) {
    process.stderr.write(`unknown suite(s): ${unknown.join(', ')}; available: ${Object.keys(suites).join(', ')}\n`);
    process.exit(2);
  }
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  process.stdout.write(`Machine: ${cpus().length} x ${cpu}, ${Math.round(totalmem() / 1073741824)} GiB, node ${process.version}\n\n`);
  for (const name of names) {
    const started = Date.now();
    process.stderr.write(`running ${name}...\n`);
    const table = await (suites[name] as Suite)();
    process.stdout.write(`${table}\n\n(${name}: ${((Date.now() - started) / 1000).toFixed(0)} s)\n\n`);
  }
  process.exit(0);
}

await main();
