/** `%load_ext albedo` as a new user meets it in a plain ipykernel: first with no daemon, then with one. */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { call, killDaemon, makeDirs, ROOT, startDaemon } from "../daemon/support/daemon.js";
import { runCell, startSpecKernel } from "./support.js";
import { writeSkill } from "../support/skills.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("K-13 %load_ext albedo with no daemon, then again once one runs", () => {
  it("the failure leads with the fix, the advised second %load_ext albedo retries, and a successful load says one line (session, skills)", { timeout: 180_000 }, async () => {
    const dirs = await makeDirs();
    cleanups.push(() => dirs.cleanup());
    writeSkill(join(dirs.workspace, ".agents", "skills"), "demo", { body: "# Demo\n" });
    const plain = join(dirs.root, "share", "jupyter", "kernels", "plain");
    await mkdir(plain, { recursive: true });
    await writeFile(join(plain, "kernel.json"), JSON.stringify({ argv: [join(ROOT, ".venv", "bin", "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"], display_name: "plain", language: "python" }));
    const env = { ...process.env, JUPYTER_PATH: join(dirs.root, "share", "jupyter") };
    const { kernel } = await startSpecKernel(env, dirs.workspace, join(dirs.root, "k"), { HOME: dirs.home, ALBEDO_HOME: dirs.state, PYTHONPATH: join(ROOT, "kernel") }, cleanups, "plain");
    const failed = await runCell(kernel, "%load_ext albedo");
    expect(failed.text).toMatch(/^albedo: could not join a session \(no albedo daemon runs for .*\)\. Start the daemon \(`albedo serve`/);
    expect(failed.text.indexOf("ALBEDO_RPC_ENDPOINT")).toBeGreaterThan(failed.text.indexOf("%load_ext albedo again"));
    const daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"]);
    cleanups.push(() => killDaemon(daemon));
    const loaded = await runCell(kernel, "%load_ext albedo");
    expect(loaded.text).not.toContain("already loaded");
    expect(loaded.text).toMatch(new RegExp(`^albedo: joined session [0-9a-f]+ on ${dirs.workspace} \\(it holds \\.agents\\) · \\d+ skills · \`skills\` and \`commands\` are defined\n$`));
    expect((await runCell(kernel, "print([s['name'] for s in (await skills.list())['skills'] if s['name'] == 'demo'])")).text).toBe("['demo']\n");
    expect((await call(daemon, "GET", "/sessions")).body.sessions).toEqual([expect.objectContaining({ client: "notebook", workspace: dirs.workspace, kernel: expect.objectContaining({ status: "external" }) })]);
  });
});
