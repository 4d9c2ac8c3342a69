/**
 * Vitest global setup: one line for each group of tests this machine will skip, with the reason and
 * what enables it, as test/support/sandbox.ts does for the sandbox suites (and test/support/testVenv.ts
 * for the groups that need the Jupyter test venv). A skip nobody is told of looks like a pass.
 */
import { spawnSync } from "node:child_process";
import { CHROMIUM, RUN_BROWSER_TESTS } from "../web/browser.js";

/** Size of the tmpfs the full-disk tests put the state dir on: room for the database and a session, little more. */
export const TMPFS_BYTES = 4 * 1024 * 1024;

/** Whether bubblewrap may mount a size-capped tmpfs here (the full-disk tests need one). */
export function canMountTmpfs(): boolean {
  const probe = spawnSync("bwrap", ["--dev-bind", "/", "/", "--size", String(TMPFS_BYTES), "--tmpfs", "/tmp", "--", "true"], { stdio: "ignore" });
  return probe.status === 0;
}

interface SkippedGroup {
  readonly what: string;
  readonly skipped: () => boolean;
  readonly reason: string;
  readonly enable: string;
}

const GROUPS: readonly SkippedGroup[] = [
  {
    what: "web console browser suite (test/web)",
    skipped: () => !RUN_BROWSER_TESTS,
    reason: `no chromium at ${CHROMIUM}`,
    enable: "apt-get install -y chromium (or point ALBEDO_TEST_CHROMIUM at a chromium)",
  },
  {
    what: "full-disk suite (test/daemon/storage.test.ts)",
    skipped: () => !canMountTmpfs(),
    reason: "bubblewrap cannot mount a size-capped tmpfs here",
    enable: "install bubblewrap and allow unprivileged user namespaces",
  },
  {
    what: "unreadable-directory test (test/skills/discovery.test.ts)",
    skipped: () => process.getuid?.() === 0,
    reason: "running as root, who reads chmod 000 directories",
    enable: "run the tests as a non-root user",
  },
];

/** The one line a run prints for a group it skips. */
export function skipLine(group: Pick<SkippedGroup, "what" | "reason" | "enable">): string {
  return `albedo tests: ${group.what} skipped: ${group.reason}. To run them: ${group.enable}.`;
}

export default function setup(): void {
  for (const group of GROUPS) if (group.skipped()) process.stderr.write(`${skipLine(group)}\n`);
}
