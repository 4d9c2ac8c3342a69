/** How the `albedo` binary behaves as a command-line program: versions, help, mistakes, colour, completion, progress, doctor. */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { COMMANDS } from "../../src/cli/plumbing/registry.js";
import { PROGRESS_DELAY_MS, startProgress } from "../../src/cli/terminal/progress.js";
import { TOPICS } from "../../src/cli/plumbing/help.js";
import { daemonFixture } from "../daemon/support/fixture.js";
import { testPython } from "../kernel/python.js";
import { sessionDirs, type SessionDirs } from "../session/fixtures.js";
import { runAlbedo } from "../support/cli.js";
import { runOnPty } from "../support/pty.js";

const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "bin", "albedo");
const VERSION = (JSON.parse(spawnSync("cat", [join(ROOT, "package.json")], { encoding: "utf8" }).stdout) as { version: string }).version;

let dirs: SessionDirs;
beforeAll(async () => {
  dirs = await sessionDirs();
});
afterAll(() => dirs?.cleanup());

function env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.stateDir, JUPYTER_DATA_DIR: join(dirs.root, "jupyter"), JUPYTER_PATH: join(dirs.root, "jupyter"), NO_COLOR: undefined, FORCE_COLOR: undefined, ...extra };
}

function albedo(args: readonly string[], extra: NodeJS.ProcessEnv = {}) {
  return runAlbedo(args, { cwd: dirs.workspace, env: env(extra) });
}

describe("X albedo --version", () => {
  it("prints the package version", async () => {
    for (const flag of ["--version", "-V"]) expect(await albedo([flag])).toEqual({ code: 0, stdout: `albedo ${VERSION}\n`, stderr: "" });
  });
});

describe("X commands that open no socket do not load zeromq", () => {
  // zeromq terminates its context when the process exits and, on a busy machine, may print a warning
  // about queued messages then: a command that needs no socket must not carry that risk (or the load time).
  const LOADED = "zeromq was loaded";
  async function loadsZeromq(args: readonly string[]): Promise<boolean> {
    const hook = join(dirs.root, "zeromq-hook.cjs");
    await writeFile(hook, `process.on("exit", () => { if (Object.keys(require.cache).some((k) => k.includes("/zeromq/"))) process.stderr.write(${JSON.stringify(LOADED)}); });\n`);
    const ran = await albedo(args, { NODE_OPTIONS: `--require ${hook}` });
    return ran.stderr.includes(LOADED);
  }

  it("help, a mistyped command and skills list leave it unloaded; exec, which runs a kernel, loads it", async () => {
    expect(await loadsZeromq(["sklls"])).toBe(false);
    expect(await loadsZeromq(["--help"])).toBe(false);
    expect(await loadsZeromq(["skills", "list"])).toBe(false);
    expect(await loadsZeromq(["exec", "--sandbox", "off", "-c", "print(1)"])).toBe(true);
  });
});

describe("X did you mean", () => {
  it("suggests the closest command, subcommand or option, with exit 2 and no wall of help", async () => {
    const command = await albedo(["sklls", "list"]);
    expect(command).toMatchObject({ code: 2, stdout: "" });
    expect(command.stderr).toBe('albedo: unknown command "sklls"; did you mean skills?\nRun `albedo --help` for the commands.\n');
    const sub = await albedo(["skills", "lsit"]);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toBe('albedo skills: unknown command "lsit"; did you mean list?\nRun `albedo skills --help` for its commands.\n');
    const option = await albedo(["skills", "list", "--worksapce", "x"]);
    expect(option.code).toBe(2);
    expect(option.stderr.split("\n")[0]).toBe("albedo skills list: unknown option --worksapce; did you mean --workspace?");
  });
});

describe("X a usage error prints the one relevant usage line", () => {
  it("says what is wrong, the command's usage line, and where the options are", async () => {
    const ran = await albedo(["exec"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toBe(
      "albedo exec: nothing to run: give FILE, - (stdin) or -c CODE\nusage: albedo exec (FILE | - | -c CODE) [options]\nRun `albedo exec --help` for the options.\n",
    );
  });
});

describe("X albedo help TOPIC", () => {
  it("explains commands, groups and topics; an unknown topic gets suggestions", async () => {
    expect((await albedo(["help", "skills", "list"])).stdout).toMatch(/^usage: albedo skills list \[options\]\n/);
    expect((await albedo(["help", "skills"])).stdout).toMatch(/^usage: albedo skills <command> \[options\]\n/);
    expect((await albedo(["help", "settings"])).stdout).toContain("albedo skills off pdf-processing --project");
    expect((await albedo(["help", "environment"])).stdout).toContain("NO_COLOR");
    const unknown = await albedo(["help", "enviroment"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no help topic "enviroment"; did you mean environment?');
  });
});

describe("X albedo help settings and environment say what the docs use", () => {
  const docs = (dir: string): string[] => readdirSync(join(ROOT, dir)).filter((name) => name.endsWith(".md")).map((name) => readFileSync(join(ROOT, dir, name), "utf8"));
  /** Dotted keys as `help settings` lists them, one a row ("  kernel.pool *   integer"). */
  const listed = (help: string) => [...help.slice(help.indexOf("Every key")).matchAll(/^ {2}([a-z]+(?:\.[A-Za-z_]+)?)(?: \*)? {2,}/gm)].map((match) => match[1]!);

  it("help settings lists every key of the settings reference's tables, and no other", async () => {
    const help = (await albedo(["help", "settings"])).stdout;
    const rows = readFileSync(join(ROOT, "docs", "settings.md"), "utf8").split("\n").filter((line) => line.startsWith("| `"));
    const documented = rows.flatMap((row) => [...row.split("|")[1]!.matchAll(/`([a-z]+(?:\.[A-Za-z_]+)?)`/g)].map((match) => match[1]!));
    expect(documented.length).toBeGreaterThan(20);
    expect(new Set(listed(help))).toEqual(new Set(documented));
  });

  it("every key the guides set or unset is one help settings lists", async () => {
    const keys = new Set(listed((await albedo(["help", "settings"])).stdout));
    const used = [...docs("docs/guide"), readFileSync(join(ROOT, "README.md"), "utf8")].flatMap((text) => [...text.matchAll(/albedo settings (?:set|unset|get) ([a-z][\w.]*)/g)].map((match) => match[1]!));
    expect(used.length).toBeGreaterThan(0);
    // `settings get` also takes a whole section.
    expect(used.filter((key) => !keys.has(key) && ![...keys].some((one) => one.startsWith(`${key}.`)))).toEqual([]);
  });

  it("help environment names every variable the docs name", async () => {
    const help = (await albedo(["help", "environment"])).stdout;
    // Test-only variables (the README's testing section) and a deadline constant are not albedo's environment.
    const notVariables = new Set(["PIP_INSTALL_TIMEOUT_MS"]);
    const named = [...docs("docs"), ...docs("docs/guide"), readFileSync(join(ROOT, "README.md"), "utf8")].flatMap((text) => [...text.matchAll(/\b(ALBEDO_[A-Z_]+|JUPYTER_[A-Z_]+|PIP_[A-Z_]+|XDG_[A-Z_]+|NO_COLOR)\b/g)].map((match) => match[1]!));
    const variables = [...new Set(named)].filter((name) => !name.startsWith("ALBEDO_TEST_") && !notVariables.has(name));
    expect(variables.length).toBeGreaterThan(10);
    expect(variables.filter((name) => !new RegExp(`\\b${name}\\b`).test(help))).toEqual([]);
  });
});

/** Every help page is a process start (over a hundred, two at a time), which a loaded machine makes slow. */
const HELP_PAGES_TIMEOUT_MS = 300_000;

describe("X help rows fit 80 columns", () => {
  it("holds for the overview, every group, every command and every topic", async () => {
    const pages = [["--help"], ...[...new Set(COMMANDS.map((c) => c.path[0]!))].map((g) => [g, "--help"]), ...COMMANDS.map((c) => [...c.path, "--help"]), ...Object.keys(TOPICS).map((t) => ["help", t])];
    // Two at a time: each page is a process start, and the machine has two cores.
    for (let i = 0; i < pages.length; i += 2) {
      const ran = await Promise.all(pages.slice(i, i + 2).map(async (page) => ({ page, run: await albedo(page) })));
      for (const { page, run } of ran) {
        expect(run.code, page.join(" ")).toBe(0);
        for (const line of run.stdout.split("\n")) expect(line.length, `${page.join(" ")}: ${line}`).toBeLessThanOrEqual(80);
      }
    }
  }, HELP_PAGES_TIMEOUT_MS);
});

describe("X colour on a terminal, off when piped or NO_COLOR", () => {
  it("colours a verdict on a terminal only", async () => {
    await mkdir(join(dirs.workspace, "bad"), { recursive: true });
    await writeFile(join(dirs.workspace, "bad", "SKILL.md"), "---\nname: Bad\ndescription: d\n---\n");
    const argv = [process.execPath, BIN, "skills", "validate", "bad"];
    const tty = await runOnPty(testPython(), argv, [], env(), dirs.workspace);
    expect(tty.exit).toBe(1);
    expect(tty.transcript).toContain("bad: \u001b[31minvalid\u001b[39m");
    const noColor = await runOnPty(testPython(), argv, [], env({ NO_COLOR: "1" }), dirs.workspace);
    expect(noColor.transcript).toContain("bad: invalid");
    expect(noColor.transcript).not.toContain("\u001b[");
    const piped = await albedo(["skills", "validate", "bad"]);
    expect(piped.stdout).toContain("bad: invalid\n");
    expect(piped.stdout + piped.stderr).not.toContain("\u001b[");
  }, 60_000);
});

describe("X a progress ticker for every wait over a second", () => {
  class Terminal extends Writable {
    readonly isTTY = true;
    text = "";
    override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
      this.text += chunk.toString("utf8");
      done();
    }
  }
  afterEach(() => vi.useRealTimers());

  it("shows nothing for a short wait, then counts seconds on a terminal, and leaves the outcome line", () => {
    vi.useFakeTimers();
    const quick = new Terminal();
    startProgress(quick, "waiting")();
    expect(quick.text).toBe("");
    const slow = new Terminal();
    const done = startProgress(slow, "albedo: starting the kernel");
    vi.advanceTimersByTime(PROGRESS_DELAY_MS + 600);
    expect(slow.text).toMatch(/\r\u001b\[2Kalbedo: starting the kernel 1\.\ds$/);
    done("albedo: the kernel did not start");
    expect(slow.text.endsWith("\r\u001b[2Kalbedo: the kernel did not start\n")).toBe(true);
    const piped = Object.assign(new Terminal(), { isTTY: false });
    startProgress(piped, "waiting");
    vi.advanceTimersByTime(PROGRESS_DELAY_MS * 3);
    expect(piped.text).toBe("");
  });
});

describe("X albedo completion bash|zsh", () => {
  it("completes commands, subcommands, options and option values in bash; zsh loads the same through bashcompinit", async () => {
    const script = (await albedo(["completion", "bash"])).stdout;
    const complete = (...words: string[]): string => {
      const probe = `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _albedo; printf '%s\\n' "\${COMPREPLY[@]}"`;
      return spawnSync("bash", ["-c", probe], { encoding: "utf8", cwd: dirs.workspace }).stdout.trim();
    };
    expect(complete("albedo", "sk")).toBe("skills");
    expect(complete("albedo", "skills", "va")).toBe("validate");
    expect(complete("albedo", "skills", "list", "--st")).toBe("--strict");
    expect(complete("albedo", "exec", "--sandbox", "re")).toBe("required");
    expect(complete("albedo", "help", "envi")).toBe("environment");
    const zsh = await albedo(["completion", "zsh"]);
    expect(zsh.stdout).toMatch(/^#compdef albedo\n/);
    expect(zsh.stdout).toContain("bashcompinit");
    expect(zsh.stdout).toContain("complete -o default -F _albedo albedo");
    expect((await albedo(["completion", "fish"])).code).toBe(2);
  });
});

describe("X K-14 albedo doctor reports the daemon, the albedo kernelspec and whether notebook kernels are sandboxed", () => {
  const fixture = daemonFixture();

  it("says when the kernelspec runs another install, when it runs this one, whether its kernels are sandboxed, and whether a daemon runs", async () => {
    const doctor = async (extra: NodeJS.ProcessEnv = {}) => JSON.parse((await albedo(["doctor", "--json"], extra)).stdout) as { checks: { name: string; status: string; detail: string; fix: string | null }[] };
    const check = async (name: string, extra: NodeJS.ProcessEnv = {}) => (await doctor(extra)).checks.find((c) => c.name === name)!;
    expect(await check("daemon")).toMatchObject({ status: "ok", detail: expect.stringContaining("not running") });
    expect(await check("notebook-sandbox")).toMatchObject({ status: "ok", detail: expect.stringContaining("no albedo kernelspec") });
    const spec = join(dirs.root, "jupyter", "kernels", "albedo");
    await mkdir(spec, { recursive: true });
    const elsewhere = { argv: [testPython(), "-m", "albedo.launch", "-f", "{connection_file}"], display_name: "albedo (Python)", language: "python", env: { ALBEDO_INSTALL: "/opt/old-albedo", PYTHONPATH: "/opt/old-albedo/kernel" } };
    await writeFile(join(spec, "kernel.json"), JSON.stringify(elsewhere));
    expect(await check("albedo-kernelspec")).toMatchObject({ status: "warn", detail: expect.stringContaining("/opt/old-albedo, not this one"), fix: expect.stringContaining("albedo kernelspec install") });
    expect(await check("notebook-sandbox")).toMatchObject({ status: "warn", detail: expect.stringContaining("does not run this install") });
    expect((await albedo(["kernelspec", "install"], { ALBEDO_PYTHON: testPython() })).code).toBe(0);
    expect(await check("albedo-kernelspec")).toMatchObject({ status: "ok", detail: expect.stringContaining("runs this install") });
    expect(await check("notebook-sandbox")).toMatchObject({ status: "ok", detail: expect.stringContaining("run in the bubblewrap sandbox") });
    // No bubblewrap on the PATH: under auto the kernels run unsandboxed (a warning), under required they run nothing (a failure).
    const noBwrap = { PATH: join(dirs.root, "empty-bin") };
    await mkdir(noBwrap.PATH, { recursive: true });
    expect(await check("notebook-sandbox", noBwrap)).toMatchObject({ status: "warn", detail: expect.stringContaining("without a sandbox"), fix: expect.stringContaining("bubblewrap") });
    await writeFile(join(dirs.stateDir, "settings.json"), JSON.stringify({ sandbox: "required" }));
    expect(await check("notebook-sandbox", noBwrap)).toMatchObject({ status: "fail", detail: expect.stringContaining("will run no code") });
    await writeFile(join(dirs.stateDir, "settings.json"), JSON.stringify({ sandbox: "off" }));
    expect(await check("notebook-sandbox")).toMatchObject({ status: "ok", detail: expect.stringContaining("without a sandbox (the sandbox setting is off)") });
    await writeFile(join(dirs.stateDir, "settings.json"), "{}");
    const daemon = await fixture.start(undefined, undefined, { dirs: { root: dirs.root, workspace: dirs.workspace, home: dirs.home, state: dirs.stateDir, cleanup: async () => undefined } });
    expect(await check("daemon")).toMatchObject({ status: "ok", detail: expect.stringContaining(`running at ${daemon.url}`) });
    const text = await albedo(["doctor"]);
    expect(text.stdout).toMatch(/\nok {4}daemon +running at /);
  }, 120_000);
});
