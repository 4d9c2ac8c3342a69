/**
 * The package layer's files on the host (N-5): made once in a fresh directory, remade when the
 * interpreter changes, one layer when two sessions make it at once, measured without following a
 * link the kernel planted, removed without following one either.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { clearPackageLayer, measurePackageLayer, preparePackageLayer, pythonPaths } from "../../src/sandbox/index.js";
import { managedVenvDir, venvPython } from "../../src/python/index.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("alb-layer-");
afterEach(() => temps.cleanup());
const QUOTA = 1024 * 1024;

describe("N-5 a workspace's package layer on the host", () => {
  it("is a venv over the interpreter: its python links to the base interpreter, a .pth adds the interpreter's site-packages", async () => {
    const { facts } = await pythonPaths(venvPython(managedVenvDir()));
    const state = temps.make();
    const layer = await preparePackageLayer(state, temps.make(), facts, QUOTA);
    expect(readlinkSync(layer.python)).toBe(facts.base);
    expect(readFileSync(join(layer.dir, "pyvenv.cfg"), "utf8")).toContain(`version = ${facts.version}`);
    const pth = readFileSync(join(layer.dir, "lib", `python${facts.version}`, "site-packages", "_albedo_base.pth"), "utf8");
    for (const site of facts.sites) expect(pth).toContain(`site.addsitedir(${JSON.stringify(site)})`);
    expect(layer.over).toBe(false);
  });

  it("two sessions making it at once end with one layer; what a kernel put in it stays for the next; another interpreter clears it", async () => {
    const facts = { base: "/usr/bin/python3", version: "3.99", sites: ["/nowhere/site-packages"] };
    const state = temps.make();
    const workspace = temps.make();
    const [a, b] = await Promise.all([preparePackageLayer(state, workspace, facts, QUOTA), preparePackageLayer(state, workspace, facts, QUOTA)]);
    expect(a.dir).toBe(b.dir);
    writeFileSync(join(a.dir, "lib", "python3.99", "site-packages", "kept.py"), "VALUE = 1\n");
    const again = await preparePackageLayer(state, workspace, facts, QUOTA);
    expect(again.cleared).toBeUndefined();
    expect(existsSync(join(again.dir, "lib", "python3.99", "site-packages", "kept.py"))).toBe(true);
    const other = await preparePackageLayer(state, workspace, { ...facts, version: "3.98" }, QUOTA);
    expect(other.cleared).toBe("it was made for /usr/bin/python3 (Python 3.99)");
    expect(existsSync(join(other.dir, "lib", "python3.99"))).toBe(false);
    expect(existsSync(join(other.dir, "lib", "python3.98", "site-packages"))).toBe(true);
  });

  it("is measured and removed without following the links a kernel planted in it", async () => {
    const facts = { base: "/usr/bin/python3", version: "3.99", sites: [] };
    const outside = temps.make();
    writeFileSync(join(outside, "big"), "x".repeat(2 * QUOTA));
    mkdirSync(join(outside, "dir"));
    writeFileSync(join(outside, "dir", "keep"), "mine");
    const layer = await preparePackageLayer(temps.make(), temps.make(), facts, QUOTA);
    symlinkSync(join(outside, "big"), join(layer.dir, "big"));
    symlinkSync(join(outside, "dir"), join(layer.dir, "dir"));
    const measured = await measurePackageLayer(layer.dir);
    expect(measured.bytes).toBeLessThan(QUOTA);
    writeFileSync(join(layer.dir, "filler"), "x".repeat(QUOTA + 1));
    expect((await measurePackageLayer(layer.dir)).bytes).toBeGreaterThan(QUOTA);
    await clearPackageLayer(layer.dir);
    expect(existsSync(layer.dir)).toBe(false);
    expect(existsSync(`${layer.dir}.json`)).toBe(false);
    expect(lstatSync(join(outside, "big")).size).toBe(2 * QUOTA);
    expect(readFileSync(join(outside, "dir", "keep"), "utf8")).toBe("mine");
  });
});
