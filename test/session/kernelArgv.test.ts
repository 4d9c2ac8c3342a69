import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { wallClockMs } from "../../src/platform/index.js";
import { poll } from "../support/poll.js";
import { NO_SANDBOX } from "../support/sandbox.js";
import { withSessionKernelScript } from "../../src/session/kernelArgv.js";
import { run, sessionsPerTest } from "./fixtures.js";

const sessions = sessionsPerTest();

describe("K-3 input history of a session kernel lives in memory", () => {
  it("keeps In, Out, _i<n> and %history for the session and writes no history file", async () => {
    const { session, dirs } = await sessions.open();
    await run(session, "x = 40");
    expect(await run(session, "x + 2")).toBe("42\n");
    const seen = await run(session, [
      "import json, os",
      "_hm = get_ipython().history_manager",
      "_shown = get_ipython().run_line_magic('history', '-n -l 2')",
      "print(json.dumps({",
      "  'in': In[1:3], 'out': Out[2], 'i1': _i1, 'file': str(_hm.hist_file),",
      "  'range': [line for _, _, line in _hm.get_range(0, 1, 3)],",
      "  'on_disk': os.path.exists(os.path.join(get_ipython().profile_dir.location, 'history.sqlite')),",
      "}))",
    ].join("\n"));
    expect(JSON.parse(seen.trim().split("\n").at(-1)!)).toEqual({
      in: ["x = 40", "x + 2"], out: 42, i1: "x = 40", file: ":memory:", range: ["x = 40", "x + 2"], on_disk: false,
    });
    expect(existsSync(join(dirs.home, ".ipython", "profile_default", "history.sqlite"))).toBe(false);
  });

  it("lists the session's cells with %history, which reads them from memory", async () => {
    const { session } = await sessions.open();
    await run(session, "a = 1");
    await run(session, "b = a + 1");
    const future = session.kernel.execute("%history -n 1-2");
    let shown = "";
    future.onOutput((output) => (shown += output.header.msg_type === "stream" ? (output.content as { text: string }).text : ""));
    expect((await future.done).status).toBe("ok");
    expect(shown).toMatch(/1: a = 1\n\s*2: b = a \+ 1/);
  });
});

describe("K-2 a session kernel replies without ipykernel's pre-reply sleep", () => {
  it("runs with _execute_sleep 0, and every output of a cell still arrives before the execution settles", async () => {
    const { session } = await sessions.open();
    expect(await run(session, "print(get_ipython().kernel._execute_sleep)")).toBe("0.0\n");
    for (let round = 0; round < 20; round++) {
      const future = session.kernel.execute("import sys\nfor i in range(50): print(i)\nsys.stderr.write('end\\n')\ndisplay('shown')\n7");
      const types: string[] = [];
      let stdout = "";
      future.onOutput((output) => {
        types.push(output.header.msg_type);
        if (output.header.msg_type === "stream" && (output.content as { name: string }).name === "stdout") stdout += (output.content as { text: string }).text;
      });
      expect((await future.done).status).toBe("ok");
      expect(stdout.split("\n").filter(Boolean)).toHaveLength(50);
      expect(types).toEqual(expect.arrayContaining(["stream", "display_data", "execute_result"]));
    }
  });
});

describe("K-2 the albedo extension's flushes skip ipykernel's iopub round trip when nothing is buffered", () => {
  const COUNT_SCHEDULES = [
    "import json, sys",
    "_pt = sys.stdout.pub_thread",
    "_calls = []",
    "_stock = _pt.schedule",
    "_pt.schedule = lambda f: (_calls.append(f), _stock(f))[1]",
    "try:",
    "    sys.stdout.flush(); sys.stderr.flush()",
    "    _empty = len(_calls)",
    "    sys.stdout.write('x\\n'); sys.stdout.flush()",
    "    _wrote = len(_calls) - _empty",
    "finally:",
    "    del _pt.schedule",
    "print(json.dumps({'quiet': type(sys.stdout.__dict__.get('flush')).__name__, 'empty': _empty, 'wrote': _wrote}))",
  ].join("\n");

  it("hands nothing to the iopub thread for an empty flush, and flushes written text as ipykernel does", async () => {
    const { session } = await sessions.open();
    const lines = (await run(session, COUNT_SCHEDULES)).trim().split("\n");
    expect(lines[0]).toBe("x");
    const seen = JSON.parse(lines.at(-1)!) as { quiet: string; empty: number; wrote: number };
    expect(seen).toMatchObject({ quiet: "QuietFlush", empty: 0 });
    expect(seen.wrote).toBeGreaterThan(0);
  });

  it("still delivers text written by other threads and without a newline before the execution settles", async () => {
    const { session } = await sessions.open();
    const cell = [
      "import sys, threading",
      "def _write(n):",
      "    for i in range(20): sys.stdout.write(f'{n}-{i};')",
      "_threads = [threading.Thread(target=_write, args=(n,)) for n in range(4)]",
      "for t in _threads: t.start()",
      "for t in _threads: t.join()",
      "sys.stdout.write('tail-no-newline')",
      "sys.stderr.write('err-no-newline')",
    ].join("\n");
    for (let round = 0; round < 10; round++) {
      const future = session.kernel.execute(cell);
      const text = { stdout: "", stderr: "" };
      future.onOutput((output) => {
        const content = output.content as { name?: "stdout" | "stderr"; text?: string };
        if (output.header.msg_type === "stream" && content.name) text[content.name] += content.text ?? "";
      });
      expect((await future.done).status).toBe("ok");
      expect(text.stdout.split(";").filter((item) => /^\d-\d+$/.test(item))).toHaveLength(80);
      expect(text.stdout.endsWith("tail-no-newline")).toBe(true);
      expect(text.stderr).toBe("err-no-newline");
    }
  });

  it("gives the streams their own flush back when the extension is unloaded, and quiet again when it is loaded", async () => {
    const { session } = await sessions.open();
    const kind = "import sys; print(type(sys.stdout.__dict__.get('flush')).__name__, type(sys.stderr.__dict__.get('flush')).__name__)";
    await run(session, "get_ipython().extension_manager.unload_extension('albedo')");
    expect(await run(session, kind)).toBe("NoneType NoneType\n");
    await run(session, "get_ipython().extension_manager.load_extension('albedo')");
    expect(await run(session, kind)).toBe("QuietFlush QuietFlush\n");
  });
});

describe("K-2 a session kernel's logger is no more verbose than its handlers", () => {
  it("drops debug lines before building a record, shows them again when log_level is lowered, and leaves a user's own logging_config alone", async () => {
    const { session } = await sessions.open();
    const states = JSON.parse((await run(session, [
      "import json, logging",
      "from albedo.session_kernel import SessionKernelApp",
      "app, log = SessionKernelApp.instance(), get_ipython().kernel.log",
      "def seen():",
      "    return {'logger': log.level, 'handlers': [h.level for h in log.handlers], 'debug': log.isEnabledFor(logging.DEBUG)}",
      "states = [seen()]",
      "app.log_level = logging.DEBUG",
      "states.append(seen())",
      "app.log_level = logging.WARNING",
      "app.logging_config = {'loggers': {'SessionKernelApp': {'handlers': ['console']}}}",
      "states.append(seen())",
      "app.logging_config = {}",
      "states.append(seen())",
      "print(json.dumps(states))",
    ].join("\n"))).trim()) as unknown[];
    expect(states).toEqual([
      // ipykernel's default: warnings and worse are shown, and the logger stops debug calls at once.
      { logger: 30, handlers: [30], debug: false },
      // Lowering log_level (--debug does) lowers both.
      { logger: 10, handlers: [10], debug: true },
      // With a logging_config of the user's own, the logger stays at traitlets' DEBUG for any handler it adds.
      { logger: 10, handlers: [30], debug: true },
      { logger: 30, handlers: [30], debug: false },
    ]);
  });
});

describe("K-2 a session kernel reads its shell socket on the main thread", () => {
  it("starts `-m ipykernel_launcher` launches through the session kernel script and leaves other command lines alone", () => {
    const script = "/opt/albedo/kernel/albedo_session_kernel.py";
    expect(withSessionKernelScript(["/venv/bin/python", "-m", "ipykernel_launcher", "-f", "{connection_file}"], script))
      .toEqual(["/venv/bin/python", script, "-f", "{connection_file}"]);
    expect(withSessionKernelScript(["python3", "-Xfrozen_modules=off", "-m", "ipykernel_launcher", "-f", "{connection_file}", "--debug"], script))
      .toEqual(["python3", "-Xfrozen_modules=off", script, "-f", "{connection_file}", "--debug"]);
    for (const argv of [
      ["python", "-m", "ipykernel", "-f", "{connection_file}"],
      ["conda", "run", "-n", "x", "python", "-m", "my_kernel", "-f", "{connection_file}"],
      ["python", "-m"],
      ["ipykernel_launcher", "-m"],
    ]) expect(withSessionKernelScript(argv, script)).toEqual(argv);
  });

  it("has no shell channel thread, does not offer subshells, and still runs awaited and blocking cells", async () => {
    const { session } = await sessions.open();
    const info = await session.kernel.kernelInfo();
    expect(info.supported_features ?? []).not.toContain("kernel subshells");
    const seen = JSON.parse((await run(session, [
      "import asyncio, json, threading",
      "await asyncio.sleep(0)",
      "print(json.dumps({'threads': sorted(t.name for t in threading.enumerate()), 'kernel': type(get_ipython().kernel).__name__,",
      "  'main': threading.current_thread() is threading.main_thread()}))",
    ].join("\n"))).trim()) as { threads: string[]; kernel: string; main: boolean };
    expect(seen.threads).not.toContain("Shell channel");
    expect(seen.threads).toContain("Control");
    expect(seen).toMatchObject({ kernel: "SessionKernel", main: true });
    // The main thread's loop now reads the shell socket: a request sent while a cell blocks is read, and
    // answered, once the cell has replied (both replies share the shell socket, so they arrive in that order).
    const blocking = session.kernel.execute("import time; time.sleep(0.3)");
    let infoAt = 0;
    const info2 = session.kernel.kernelInfo().then((reply) => ((infoAt = wallClockMs()), reply));
    expect((await blocking.done).status).toBe("ok");
    expect((await info2).status).toBe("ok");
    expect(blocking.timeline.times().replyReceived).toBeLessThanOrEqual(infoAt);
  });

  it("loads with the workspace off sys.path, and cells import workspace modules as usual", async () => {
    const PLANTED = ["ipykernel_launcher", "ipykernel", "traitlets", "albedo", "albedo_session_kernel"];
    const { session, dirs } = await sessions.open(async ({ workspace }) => {
      // A module the kernel imports while it loads: if the workspace were searched then, this would run and break the start.
      for (const name of PLANTED) {
        await writeFile(join(workspace, `${name}.py`), `open(${JSON.stringify(join(workspace, `planted-${name}`))}, "w").close()\nraise SystemExit("planted ${name}")\n`);
      }
      await writeFile(join(workspace, "helper_mod.py"), "VALUE = 41\n");
    });
    expect(await run(session, "import helper_mod; print(helper_mod.VALUE + 1)")).toBe("42\n");
    for (const name of PLANTED) expect(existsSync(join(dirs.workspace, `planted-${name}`))).toBe(false);
  });

  it.skipIf(NO_SANDBOX)("a sandboxed kernel that plants ipykernel's launcher in the workspace and kills itself is restarted as albedo's kernel, not the planted one", async () => {
    const { session, dirs } = await sessions.open(undefined, { sandbox: "required" });
    const firstPid = session.kernel.pid!;
    const marker = join(dirs.workspace, "planted-ran");
    // Written from inside the sandbox, into its own working directory, then the kernel dies and the session restarts it.
    const dying = session.kernel.execute([
      "import os",
      "for name in ('ipykernel_launcher', 'ipykernel', 'traitlets', 'albedo', 'albedo_session_kernel'):",
      `    open(name + '.py', 'w').write('open(${JSON.stringify(marker)}, "a").write(__name__ + "\\n")\\n')`,
      "os._exit(1)",
    ].join("\n"));
    await dying.done.catch(() => undefined);
    await poll(() => session.kernel.pid !== firstPid && ["idle", "ready"].includes(session.kernel.status), { what: "the restarted kernel", timeoutMs: 60_000 });
    expect(existsSync(join(dirs.workspace, "ipykernel_launcher.py"))).toBe(true);
    expect(await run(session, "import sys; print(sys.argv[0].endswith('albedo_session_kernel.py'), type(get_ipython().kernel).__name__)")).toBe("True SessionKernel\n");
    expect(existsSync(marker)).toBe(false);
  }, 90_000);
});
