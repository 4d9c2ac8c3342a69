import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
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
    const future = session.execute("%history -n 1-2");
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
      const future = session.execute("import sys\nfor i in range(50): print(i)\nsys.stderr.write('end\\n')\ndisplay('shown')\n7");
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
      const future = session.execute(cell);
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
