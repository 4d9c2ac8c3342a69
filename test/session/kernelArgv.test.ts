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
