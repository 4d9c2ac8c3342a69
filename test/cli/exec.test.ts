import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT_INTERRUPTED } from "../../src/cli/commands/exec.js";
import { INTERRUPT_NOTICE_MS } from "../../src/cli/terminal/interrupt.js";
import { MAX_OUTPUT_MESSAGE_BYTES } from "../../src/kernel/index.js";
import { sessionDirs, type SessionDirs } from "../session/fixtures.js";
import { ALBEDO_BIN, CLI_PROCESS_TIMEOUT_MS, runAlbedo, type CliRun } from "../support/cli.js";
import { withoutSandboxWarning } from "../support/sandbox.js";
import { roots, writeSkill } from "../support/skills.js";


let dirs: SessionDirs;
/** Bound on each step of the Ctrl-C tests: far above the expected seconds, far below the test's timeout. */
const STEP_WAIT_MS = 20_000;

beforeAll(async () => {
  dirs = await sessionDirs();
  writeSkill(roots.wsAgents(dirs.workspace), "demo");
});

afterAll(() => dirs?.cleanup());

function albedo(args: string[], stdin = ""): Promise<CliRun> {
  return runAlbedo(args, { cwd: dirs.workspace, env: { ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.stateDir }, stdin });
}

/**
 * `albedo exec -c CODE` as a child to send signals to: what it printed so far, each wait bounded by
 * STEP_WAIT_MS and failing with the step and the output, so a hang says where it stopped.
 */
function execUnderSignals(code: string) {
  const child = spawn(process.execPath, [ALBEDO_BIN, "exec", "-c", code], {
    cwd: dirs.workspace,
    env: { ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.stateDir },
    timeout: CLI_PROCESS_TIMEOUT_MS,
  });
  const output = { stdout: "", stderr: "" };
  child.stdout.on("data", (chunk) => (output.stdout += chunk));
  child.stderr.on("data", (chunk) => (output.stderr += chunk));
  const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
  const bounded = async <T>(step: Promise<T>, what: string): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      const shown = () => `stdout ${JSON.stringify(output.stdout.slice(-500))}, stderr ${JSON.stringify(output.stderr.slice(-1500))}`;
      timer = setTimeout(() => reject(new Error(`${what} within STEP_WAIT_MS (${STEP_WAIT_MS} ms); ${shown()}`)), STEP_WAIT_MS);
    });
    try {
      return await Promise.race([step, late]);
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    child,
    output,
    /** Resolves once `stream` shows `text`. */
    seen(stream: "stdout" | "stderr", text: string): Promise<void> {
      const shows = new Promise<void>((resolve) => {
        const check = () => output[stream].includes(text) && resolve();
        child[stream].on("data", check);
        check();
      });
      return bounded(shows, `no ${JSON.stringify(text)} on ${stream}`);
    },
    /** The exit code. */
    exited: (): Promise<number | null> => bounded(closed, "no exit"),
  };
}

describe("X albedo exec", () => {
  it("runs -c code with top-level await, skills and commands in scope, and prints the catalog", async () => {
    const ran = await albedo(["exec", "-c", "print(await commands.catalog())"]);
    expect(withoutSandboxWarning(ran.stderr)).toBe("");
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain("'/demo'");
    expect(ran.stdout).toContain("'/reload'");
  });

  it("runs a FILE and code from stdin (-)", async () => {
    await writeFile(join(dirs.workspace, "job.py"), "r = await skills.read('demo')\nprint(r['content'].splitlines()[1])\n");
    const fromFile = await albedo(["exec", "job.py"]);
    expect(fromFile.stdout).toBe("name: demo\n");
    const fromStdin = await albedo(["exec", "-"], "import sys\nprint('from stdin', file=sys.stderr)\n6 * 7\n");
    expect(fromStdin.code).toBe(0);
    expect(fromStdin.stdout).toBe("42\n");
    expect(withoutSandboxWarning(fromStdin.stderr)).toBe("from stdin\n");
  });

  it("exits 1 with the traceback on a Python error", async () => {
    const ran = await albedo(["exec", "-c", "print('before')\nraise ValueError('boom')"]);
    expect(ran.code).toBe(1);
    expect(ran.stdout).toBe("before\n");
    expect(ran.stderr).toContain("ValueError: boom");
    expect(ran.stderr).not.toMatch(/\u001b\[/);
  });

  it("refuses bad usage with exit 2 and the usage text", async () => {
    expect((await albedo(["exec"])).code).toBe(2);
    const both = await albedo(["exec", "-c", "1", "job.py"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("either -c CODE or FILE");
    const sandbox = await albedo(["exec", "--sandbox", "maybe", "-c", "1"]);
    expect(sandbox.code).toBe(2);
    expect(sandbox.stderr).toContain("--sandbox must be one of auto, required, off");
    expect((await albedo(["exec", "missing.py"])).stderr).toContain("cannot read missing.py");
  });

  it("Ctrl-C interrupts the running cell: exit 1 with KeyboardInterrupt, and nothing is left in the state dir", async () => {
    const run = execUnderSignals("import time\nprint('started', flush=True)\ntime.sleep(100)");
    try {
      await run.seen("stdout", "started");
      run.child.kill("SIGINT");
      expect(await run.exited()).toBe(1);
    } finally {
      run.child.kill("SIGKILL");
    }
    expect(run.output.stderr).toContain("KeyboardInterrupt");
    const { readdir } = await import("node:fs/promises");
    expect(await readdir(join(dirs.stateDir, "run"))).toEqual([]);
  });

  it("a cell that swallows the interrupt: exec says it is still running and what to do; a second Ctrl-C stops the kernel and exits 130", async () => {
    const run = execUnderSignals("import time\nwhile True:\n    try:\n        print('started', flush=True)\n        time.sleep(100)\n    except KeyboardInterrupt:\n        print('swallowed', flush=True)");
    try {
      await run.seen("stdout", "started");
      run.child.kill("SIGINT");
      // The cell catches every KeyboardInterrupt, so it is still running when the notice is due.
      await run.seen("stderr", `still running ${INTERRUPT_NOTICE_MS / 1000} s after the interrupt; press Ctrl-C again to stop the kernel and exit`);
      run.child.kill("SIGINT");
      await run.seen("stderr", "albedo exec: stopping the kernel");
      expect(await run.exited()).toBe(EXIT_INTERRUPTED);
    } finally {
      run.child.kill("SIGKILL");
    }
    expect(run.output.stderr).not.toContain("could not interrupt");
    const { readdir } = await import("node:fs/promises");
    expect(await readdir(join(dirs.stateDir, "run"))).toEqual([]);
  });

  it("has --help", async () => {
    const help = await albedo(["exec", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("usage: albedo exec (FILE | - | -c CODE)");
    expect(help.stdout).toContain("--sandbox MODE");
  });
});

describe("X B albedo exec prints outputs as they come, each bounded", () => {
  it("cuts a 40 MB print to MAX_OUTPUT_MESSAGE_BYTES with the marker, and still prints what follows", async () => {
    const ran = await albedo(["exec", "-c", "import sys\nsys.stdout.write('x' * (40 * 1024 * 1024))\nsys.stdout.flush()\nprint('after')"]);
    expect(ran.code).toBe(0);
    expect(Buffer.byteLength(ran.stdout)).toBeLessThanOrEqual(MAX_OUTPUT_MESSAGE_BYTES);
    expect(ran.stdout).toMatch(/^x+\n\[albedo: [\d.]+ MB of output dropped: more than MAX_OUTPUT_MESSAGE_BYTES \(2\.0 MB\) in one output\]\nafter\n$/);
  });
});

describe("X albedo console", () => {
  it("runs Python cells, blocks, slash commands and /reload session from piped input", async () => {
    const input = [
      "x = 20",
      "for i in range(2):",
      "    x += 1",
      "",
      "print(x)",
      "/help reload",
      "/nope",
      "/reload session",
      "print((await commands.invoke('/status'))['skills'] > 0)",
      "",
    ].join("\n");
    writeSkill(roots.wsAgents(dirs.workspace), "late");
    const ran = await albedo(["console"], input);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain("22\n");
    expect(ran.stdout).toContain("/reload [target]\nRe-run skill discovery");
    expect(ran.stderr).toContain("/nope: no command /nope");
    expect(ran.stdout).toMatch(/reloaded: no change, \d+ skills\n/);
    expect(ran.stdout).toContain("True\n");
  });
});

describe("X every command has --help", () => {
  it("answers --help on each command and command group with exit 0, and an unknown command with exit 2", async () => {
    for (const words of [["--help"], ["skills", "--help"], ["kernelspec", "--help"], ["skills", "list", "--help"], ["serve", "--help"], ["doctor", "--help"], ["console", "--help"]]) {
      const ran = await albedo(words);
      expect(ran.code, words.join(" ")).toBe(0);
      expect(ran.stdout).toContain("usage: albedo");
    }
    const unknown = await albedo(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
  });
});

describe("X albedo exec exits as the script asks", () => {
  it("passes sys.exit(N) through as the exit status, without IPython's traceback or hint", async () => {
    const three = await albedo(["exec", "-c", "import sys\nprint('bye')\nsys.exit(3)"]);
    expect(three).toMatchObject({ code: 3, stdout: "bye\n" });
    expect(three.stderr).not.toContain("SystemExit");
    expect(three.stderr).not.toContain("To exit");
    expect((await albedo(["exec", "-c", "raise SystemExit"])).code).toBe(0);
    const message = await albedo(["exec", "-c", "import sys; sys.exit('no input file')"]);
    expect(message.code).toBe(1);
    expect(withoutSandboxWarning(message.stderr)).toBe("no input file\n");
  });

  it("says No such file or directory for a missing FILE, as python does, without the usage text", async () => {
    const ran = await albedo(["exec", "missing.py"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toBe("albedo exec: cannot read missing.py: No such file or directory\n");
  });

  it("prints the page IPython answers obj? with", async () => {
    const ran = await albedo(["exec", "-c", "len?"]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/^Signature: len\(obj, \/\)\nDocstring: Return the number of items in a container\./);
  });
});
