/**
 * Vitest global setup: one line for each group of tests this machine will skip, with the reason and
 * what enables it, as test/support/sandbox.ts does for the sandbox suites. A skip nobody is told of
 * looks like a pass.
 */
import { spawnSync } from "node:child_process";
import { CHROMIUM, RUN_BROWSER_TESTS } from "../web/browser.js";
import { HAVE_ENTERPRISE_GATEWAY, HAVE_JUPYTER_SERVER, JUPYTER_VENV } from "../remote/jupyterServer.js";

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
    what: "remote-kernel suites (test/remote)",
    skipped: () => !HAVE_JUPYTER_SERVER,
    reason: `no jupyter-server in ${JUPYTER_VENV}`,
    enable: "run scripts/jupyter-test-venv.sh (or point ALBEDO_TEST_JUPYTER_VENV at a venv that has it)",
  },
  {
    what: "Enterprise Gateway suite (test/remote/gateway.test.ts)",
    skipped: () => !HAVE_ENTERPRISE_GATEWAY,
    reason: `no jupyter-enterprisegateway in ${JUPYTER_VENV}`,
    enable: `install it there (${JUPYTER_VENV}/bin/pip install jupyter_enterprise_gateway)`,
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
