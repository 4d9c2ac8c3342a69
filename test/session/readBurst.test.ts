import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RPC_MAX_PENDING_CALLS } from "../../src/rpc/index.js";
import { run, sessionsPerTest } from "./fixtures.js";
import { roots, writeSkill } from "../support/skills.js";

const sessions = sessionsPerTest();

/** More awaited reads at once than the runtime lets be in flight. */
const BURST = 2 * RPC_MAX_PENDING_CALLS;

describe("K-4 a burst of awaited reads in a cell", () => {
  it("answers every read: the kernel holds back what the runtime would refuse", async () => {
    const { session } = await sessions.open((dirs) => writeSkill(roots.wsAgents(dirs.workspace), "demo"));
    const out = await run(session, [
      "import asyncio, collections",
      `_pages = await asyncio.gather(*[skills.read('demo', limit=64) for _ in range(${BURST})], return_exceptions=True)`,
      "print(sorted(collections.Counter(type(p).__name__ for p in _pages).items()))",
    ].join("\n"));
    expect(out.trim()).toBe(`[('dict', ${BURST})]`);
  });

  it("refuses every read the kernel sends after editing SKILL.md, even while earlier reads of the burst are in flight", async () => {
    // A sandboxed kernel sees its skill roots read-only; without the sandbox it can edit a skill and then call.
    const { session, dirs } = await sessions.open((d) => writeSkill(roots.wsAgents(d.workspace), "demo"), { sandbox: "off" });
    const skillFile = join(dirs.workspace, ".agents", "skills", "demo", "SKILL.md");
    const out = await run(session, [
      "import asyncio, json, pathlib",
      "from albedo import ReloadRequired",
      "_edited, _paged = False, asyncio.Event()",
      "async def _reader():",
      "    after = _edited  # the call goes out in this same step",
      "    try:",
      "        await skills.read('demo', limit=64)",
      "        _paged.set()",
      "        return after, 'page'",
      "    except ReloadRequired:",
      "        return after, 'reload_required'",
      "async def _editor():",
      "    global _edited",
      "    await _paged.wait()  # the edit lands while the burst's first reads are answered",
      `    _path = pathlib.Path(${JSON.stringify(skillFile)})`,
      "    _path.write_text(_path.read_text().replace('The demo skill.', 'The demo skill, changed.'))",
      "    _edited = True",
      "    return await asyncio.gather(*[_reader() for _ in range(200)])",
      "_results = await asyncio.gather(*[_reader() for _ in range(300)], _editor())",
      "_before, _after = _results[:300], _results[300]",
      "print(json.dumps({'after': sorted({v for _, v in _after}), 'before_answered': len(_before), 'any_page': any(v == 'page' for _, v in _before)}))",
    ].join("\n"));
    const seen = JSON.parse(out.trim().split("\n").at(-1)!);
    expect(seen.after).toEqual(["reload_required"]);
    expect(seen.before_answered).toBe(300);
    expect(seen.any_page).toBe(true);
  });
});
