// How many helper threads V8 runs beside the Core's event loop (concurrent and parallel garbage
// collection, background compilation). Node starts four unless told otherwise, and the number is fixed
// when the process starts. On a machine with two cores, four collector threads waking at once, beside an
// embedding worker that is indexing, leave the event loop waiting for a core: a light switch's call waits
// behind a garbage collection of the Core or of its plugins. One helper thread keeps collections
// concurrent while leaving a core to the bus, so every launcher of the Core passes CORE_V8_POOL_FLAG.
import { availableParallelism } from 'node:os';

/** The Node flag every launcher of the Core passes (npm start, the Docker image, the add-on). */
export const CORE_V8_POOL_FLAG = '--v8-pool-size=1';

/** Node's own default when no --v8-pool-size is given. */
export const NODE_DEFAULT_V8_POOL_SIZE = 4;

/** Machines with at most this many cores are advised to run the Core with CORE_V8_POOL_FLAG. */
const SMALL_MACHINE_CORES = 2;

const POOL_FLAG = /^--v8[-_]pool[-_]size(?:=(\d+))?$/;

/**
 * The helper threads this process was started with: the last --v8-pool-size among Node's options
 * (NODE_OPTIONS first, then the command line, which wins), or Node's default. A size of 0 lets Node
 * pick from the cores.
 */
export function v8HelperThreads(execArgv: readonly string[], nodeOptions: string | undefined, cores = availableParallelism()): number {
  const options = [...(nodeOptions ?? '').split(/\s+/).filter(Boolean), ...execArgv];
  let size: number | undefined;
  options.forEach((option, i) => {
    const match = POOL_FLAG.exec(option);
    if (!match) return;
    const value = match[1] ?? options[i + 1];
    if (value !== undefined && /^\d+$/.test(value)) size = Number(value);
  });
  if (size === undefined) return NODE_DEFAULT_V8_POOL_SIZE;
  return size === 0 ? Math.max(1, cores - 1) : size;
}

/** A sentence for the operator when the Core runs with more helper threads than a small machine has room for. */
export function v8HelperThreadsAdvice(helperThreads: number, cores: number): string | undefined {
  if (cores > SMALL_MACHINE_CORES || helperThreads <= 1) return undefined;
  return (
    `this machine has ${cores} core${cores === 1 ? '' : 's'} and Node runs ${helperThreads} garbage-collection helper threads beside the event loop; ` +
    `start the Core with node ${CORE_V8_POOL_FLAG} dist/src/cli.js start (npm start, the Docker image and the add-on do) ` +
    'so that a collection leaves a core to the bus'
  );
}
