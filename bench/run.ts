/**
 * `npm run -s bench`: runs every benchmark once and prints one JSON document on stdout, then draws
 * the goals into bench/results.svg (a full run only). Progress goes to stderr so the JSON can be
 * piped. Medians, not means: machines here are noisy. `node dist/bench/run.js NAME...` runs some.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { installDir } from "../src/platform/index.js";
import { goalsChart } from "./chart.js";
import { benchCli } from "./cli.js";
import { benchDiscovery } from "./skills.js";
import { benchReads } from "./reads.js";
import { benchKernel } from "./kernel.js";
import { benchTurns } from "./turns.js";
import { benchRemote } from "./remote.js";
import { benchScale } from "./scale.js";
import { benchImageConversation, benchImages } from "./images.js";
import { benchDaemonImageMemory } from "./daemonImages.js";
import { benchKernelFlood } from "./kernelFlood.js";
import { benchMcp } from "./mcp.js";
import { benchMcpServer } from "./mcpServer.js";
import { benchNetwork } from "./network.js";
import { benchNotebook } from "./notebook.js";
import { benchWeb } from "./web.js";
import { benchCheckpoint } from "./checkpoint.js";

type Bench = () => Promise<Record<string, unknown>>;

const BENCHES: ReadonlyArray<[string, Bench]> = [
  ["cli", benchCli],
  ["discovery_128_skills", benchDiscovery],
  ["reads_1000_small", benchReads],
  ["kernel_bridge", benchKernel],
  ["turns", benchTurns],
  ["images", benchImages],
  ["images_conversation", benchImageConversation],
  ["images_daemon_memory", benchDaemonImageMemory],
  ["kernel_flood_daemon_memory", benchKernelFlood],
  ["mcp", benchMcp],
  ["mcp_server", benchMcpServer],
  ["scale", benchScale],
  ["remote_kernel", benchRemote],
  ["notebook", benchNotebook],
  ["web", benchWeb],
  ["network", benchNetwork],
  ["checkpoint", benchCheckpoint],
];

/** Where a full run draws its goals. */
export const CHART_FILE = join("bench", "results.svg");

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
  if (only.length === 0) {
    writeFileSync(join(installDir(), CHART_FILE), goalsChart(results, `${report.date.slice(0, 10)}, node ${report.node}, ${report.platform}`));
    process.stderr.write(`bench: drew the goals in ${CHART_FILE}\n`);
  }
}

await main();
