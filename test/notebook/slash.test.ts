/**
 * Slash commands, results and errors as a notebook user meets them: a real ipykernel started from
 * the albedo kernelspec (or a plain one after `%load_ext albedo`), backed by a real daemon.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { KernelClient } from "../../src/kernel/index.js";
import { killDaemon, makeDirs, ROOT, startDaemon, type DaemonProcess, type Dirs } from "../daemon/support/daemon.js";
import { installSpec, runCell, startSpecKernel } from "./support.js";
import { writeSkill } from "../support/skills.js";
import { tempDir } from "../support/tempDirs.js";

const cleanups: Array<() => Promise<void>> = [];
let dirs: Dirs;
let daemon: DaemonProcess;
let kernel: KernelClient;

beforeAll(async () => {
  dirs = await makeDirs();
  writeSkill(join(dirs.workspace, ".agents", "skills"), "demo", { body: "# Demo\n\nTidy the *workspace*.\n" });
  daemon = await startDaemon(dirs);
  const env = installSpec(dirs.root);
  ({ kernel } = await startSpecKernel(env, dirs.workspace, join(dirs.root, "k"), { HOME: dirs.home, ALBEDO_HOME: dirs.state }, cleanups));
}, 120_000);

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await killDaemon(daemon, "SIGTERM");
  await dirs.cleanup();
});

describe("K-13 C-2 slash commands in a notebook cell on the albedo kernel", () => {
  it("/help and /reload session run as commands, each readable, and every slash line of a cell answers", async () => {
    writeSkill(join(dirs.workspace, ".agents", "skills"), "sql-review");
    const cell = await runCell(kernel, "/reload session\nx = (6\n/3)\n/help reload");
    expect(cell.status).toBe("ok");
    const texts = cell.displays.map((data) => data["text/plain"]);
    expect(texts[0]).toMatch(/^reloaded: \+1 skill \(sql-review\), \d+ skills$/);
    expect(texts[1]).toContain("/reload [target]");
    expect(cell.displays[1]!["text/markdown"]).toMatch(/^```text\n\/reload \[target\]/);
    expect((await runCell(kernel, "print(x)")).text).toBe("2.0\n");
  });

  it("%albedo does the same, and keeps the data for Python", async () => {
    const cell = await runCell(kernel, "r = %albedo /status\nprint(r.value['skills'] > 0, r.command)\nr");
    expect(cell.text).toBe("True /status\n");
    expect(cell.displays[0]!["text/plain"]).toMatch(/^session\s+[0-9a-f]+\nkernel\s/);
  });

  it("a skill activation shows name, source and arguments, then its instructions as text (and Markdown), still a dict", async () => {
    const typed = await runCell(kernel, "a = await commands.demo('go')\nprint(a['arguments'])\na");
    expect(typed.text).toBe("go\n");
    const plain = typed.displays[0]!["text/plain"]!;
    expect(plain).toMatch(/^skill demo {2}\(.*\/\.agents\/skills\/demo\/SKILL\.md\)\narguments: go\n\n# Demo\n\nTidy the \*workspace\*\.$/);
    expect(typed.displays[0]!["text/markdown"]).toContain("# Demo\n\nTidy the *workspace*.");
    const slash = await runCell(kernel, "/demo fill the form");
    expect(slash.displays[0]!["text/plain"]).toContain("arguments: fill the form\n\n# Demo");
  });

  it("Tab after a slash command completes its arguments and offers no IPython magics", async () => {
    const complete = async (line: string) => {
      const reply = await kernel.complete(line, line.length);
      if (reply.status !== "ok") throw new Error(`complete ${line}: ${reply.status}`);
      return { matches: reply.matches, start: reply.cursor_start };
    };
    expect(await complete("/reload s")).toEqual({ matches: ["session"], start: "/reload ".length });
    expect((await complete("/he")).matches).toEqual(["/help"]);
    expect((await complete("/help /rel")).matches).toEqual(["/reload"]);
    expect((await complete("%albedo /reload ")).matches).toEqual(["session"]);
  });

  it("commands.<skill added by a reload> says how to call it; another unknown name gets the closest names", async () => {
    const added = await runCell(kernel, "commands.sql_review");
    expect(added.status).toBe("error");
    expect(added.text).toContain('await commands.invoke("/sql-review", "<arguments>")');
    expect(added.text).toContain("typed methods are made when the kernel starts");
    const typo = await runCell(kernel, "commands.dmo");
    expect(typo.text).toMatch(/commands has no method 'dmo'; did you mean demo\? await commands\.catalog\(\)/);
    const unlike = await runCell(kernel, "commands.qqqzzz");
    expect(unlike.text).toMatch(/commands has no method 'qqqzzz'\. await commands\.catalog\(\) lists every command/);
    expect((await runCell(kernel, "print(hasattr(commands, 'nope'), hasattr(commands, '_repr_html_'))")).text).toBe("False False\n");
  });

  it("an albedo error's traceback shows the user's code and none of the package's frames", async () => {
    const cell = await runCell(kernel, "async def go():\n    return await commands.invoke('/nope')\nawait go()");
    expect(cell.text).toContain("NotFound: [not_found] no command /nope in this session");
    expect(cell.traceback).toContain("await go()");
    expect(cell.traceback).toContain("return await commands.invoke('/nope')");
    for (const internal of ["_transport.py", "_cells.py", "_namespaces.py", "_display.py", "_slash.py"]) expect(cell.traceback).not.toContain(internal);
    const unknown = await runCell(kernel, "/nope");
    expect(unknown.text).toContain("no command /nope in this session; see /help");
    expect(unknown.traceback).not.toContain("_slash.py");
  });

  it("an interrupted cell's KeyboardInterrupt shows the user's code and nothing of albedo's", async () => {
    const future = kernel.execute("import time\nprint('sleeping', flush=True)\ntime.sleep(30)");
    let traceback = "";
    const started = new Promise<void>((resolve) =>
      future.onOutput((output) => {
        if (output.header.msg_type === "stream") resolve();
        // eslint-disable-next-line no-control-regex
        if (output.header.msg_type === "error") traceback = ((output.content as { traceback?: string[] }).traceback ?? []).join("\n").replace(/\u001b\[[0-9;]*m/g, "");
      }),
    );
    await started;
    await kernel.interrupt();
    expect((await future.done).status).toBe("error");
    expect(traceback).toContain("KeyboardInterrupt");
    expect(traceback).toContain("time.sleep(30)");
    expect(traceback).not.toContain("_cells.py");
    expect((await runCell(kernel, "print('after')")).text).toBe("after\n");
  });

  it("obj? shows a typed method's signature and docstring", async () => {
    const cell = await runCell(kernel, "commands.demo?");
    expect(cell.pages[0]).toMatch(/Signature: commands\.demo\(arguments=None\)/);
    expect(cell.pages[0]).toContain("The demo skill.");
  });
});

describe("K-13 %load_ext albedo in a kernel albedo did not start", () => {
  const local: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of local.splice(0).reverse()) await cleanup();
  });

  it("joins a daemon session for the kernel's directory and gets skills, commands and slash lines", async () => {
    const { dir: root, remove } = tempDir("nb-plain-");
    local.push(async () => remove());
    const plain = join(root, "share", "jupyter", "kernels", "plain");
    await mkdir(plain, { recursive: true });
    const python = join(ROOT, ".venv", "bin", "python");
    await writeFile(join(plain, "kernel.json"), JSON.stringify({ argv: [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"], display_name: "plain", language: "python" }));
    const env = { ...process.env, JUPYTER_PATH: join(root, "share", "jupyter") };
    const { kernel: other } = await startSpecKernel(env, dirs.workspace, join(dirs.root, "k2"), { HOME: dirs.home, ALBEDO_HOME: dirs.state, PYTHONPATH: join(ROOT, "kernel") }, local, "plain");
    expect((await runCell(other, "print('commands' in dir())")).text).toBe("False\n");
    const loaded = await runCell(other, "%load_ext albedo\nprint(sorted(c['name'] for c in (await commands.catalog())['commands'])[:2])");
    expect(loaded.status).toBe("ok");
    expect(loaded.text).toContain("'/complexity-review'");
    const slash = await runCell(other, "/skills");
    expect(slash.displays[0]!["text/plain"]).toMatch(/^NAME\s+SCOPE\s+DESCRIPTION\n/);
  });
});
