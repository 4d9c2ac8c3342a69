/**
 * `npm run bench`: runs every benchmark once and prints one JSON document on stdout.
 * Progress goes to stderr so the JSON can be piped. Medians, not means: machines here are noisy.
 */
import { benchDiscovery } from "./skills.js";
import { benchReads } from "./reads.js";
import { benchKernel } from "./kernel.js";
import { benchTurns } from "./turns.js";
import { benchRemote } from "./remote.js";

type Bench = () => Promise<Record<string, unknown>>;

const BENCHES: ReadonlyArray<[string, Bench]> = [
  ["discovery_128_skills", benchDiscovery],
  ["reads_1000_small", benchReads],
  ["kernel_bridge", benchKernel],
  ["turns", benchTurns],
  ["remote_kernel", benchRemote],
];

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const results: Record<string, unknown> = {};
  for (const [name, bench] of BENCHES) {
    if (only.length > 0 && !only.includes(name)) continue;
    process.stderr.write(`bench: ${name}...\n`);
    results[name] = await bench();
  }
  const report = { node: process.version, platform: `${process.platform}-${process.arch}`, date: new Date().toISOString(), results };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

await main();
