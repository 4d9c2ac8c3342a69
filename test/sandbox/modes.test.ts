import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { prepareSandbox, SandboxUnavailableError, type SandboxProfile } from "../../src/sandbox/index.js";
import { orderMounts, type Mount } from "../../src/sandbox/mounts.js";
import { NO_SANDBOX } from "../support/sandbox.js";
import { tempDirs } from "../support/tempDirs.js";

describe("K-10 sandbox modes", () => {
  const temps = tempDirs("albedo-modes-");
  let dir: string;
  let profile: SandboxProfile;

  beforeEach(() => {
    dir = temps.make();
    for (const sub of ["ws", "state/run/s1", "home", "fakebin", "empty"]) mkdirSync(join(dir, sub), { recursive: true });
    profile = { workspace: join(dir, "ws"), runDir: join(dir, "state/run/s1"), stateDir: join(dir, "state"), home: join(dir, "home"), readOnly: [] };
  });
  afterEach(() => temps.cleanup());

  const noBwrapEnv = () => ({ PATH: join(dir, "empty") });

  it("off: no sandbox and no warning, whatever is installed", () => {
    const sandbox = prepareSandbox({ mode: "off", profile });
    expect(sandbox.kind).toBe("none");
    expect(sandbox.kind === "none" && sandbox.warning).toBeUndefined();
    expect(sandbox.wrap).toBeUndefined();
  });

  it("auto without bwrap on PATH: no sandbox, and a warning that says so and how to fix it", () => {
    const sandbox = prepareSandbox({ mode: "auto", profile, env: noBwrapEnv() });
    if (sandbox.kind !== "none") throw new Error("expected no sandbox");
    expect(sandbox.reason).toMatch(/bubblewrap \(bwrap\) not found/);
    expect(sandbox.warning).toBe(
      "sandbox: bubblewrap not found; kernels run unsandboxed. Install it with `apt-get install bubblewrap`, or run `albedo settings set sandbox off` to silence this.",
    );
  });

  it("required without bwrap on PATH: a clear error, so no kernel starts", () => {
    expect(() => prepareSandbox({ mode: "required", profile, env: noBwrapEnv() })).toThrow(SandboxUnavailableError);
    expect(() => prepareSandbox({ mode: "required", profile, env: noBwrapEnv() })).toThrow(/sandbox is required but unavailable: bubblewrap \(bwrap\) not found.*apt-get install bubblewrap/);
  });

  it("a bwrap that cannot start a sandbox counts as unusable (auto warns with its error, required throws)", () => {
    const fake = join(dir, "fakebin", "bwrap");
    writeFileSync(fake, "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n");
    chmodSync(fake, 0o755);
    const env = { PATH: join(dir, "fakebin") };
    const sandbox = prepareSandbox({ mode: "auto", profile, env });
    expect(sandbox.kind === "none" && sandbox.warning).toMatch(/cannot start a sandbox \(exit 1: bwrap: No permissions to create new namespace\); kernels run unsandboxed/);
    expect(() => prepareSandbox({ mode: "required", profile, env })).toThrow(/No permissions to create new namespace/);
  });

  // Profile checks come after finding a working bubblewrap, so they need one.
  it.skipIf(NO_SANDBOX)("a profile whose workspace does not exist, or lies in the state dir, is refused before any kernel starts", () => {
    expect(() => prepareSandbox({ mode: "required", profile: { ...profile, workspace: join(dir, "missing") } })).toThrow(/sandbox workspace .* cannot be pinned/);
    expect(() => prepareSandbox({ mode: "required", profile: { ...profile, runDir: "relative/run" } })).toThrow(/sandbox run dir must be an absolute path/);
    mkdirSync(join(dir, "state", "ws"));
    expect(() => prepareSandbox({ mode: "required", profile: { ...profile, workspace: join(dir, "state", "ws") } })).toThrow(/inside the state dir/);
  });
});

describe("K-10 mount order", () => {
  const m = (kind: Mount["kind"], dest: string): Mount => ({ kind, dest });

  it("applies ancestors first, so the run dir is bound back after the state dir is hidden", () => {
    const ordered = orderMounts([m("rw", "/h/.albedo/run/s1"), m("hide-always", "/h/.albedo"), m("hide", "/h"), m("ro", "/h/.albedo/skills")]);
    expect(ordered.map((x) => `${x.kind} ${x.dest}`)).toEqual(["hide /h", "hide-always /h/.albedo", "ro /h/.albedo/skills", "rw /h/.albedo/run/s1"]);
  });

  it("at one path: an exposure beats hiding the home, but nothing beats hiding the state dir", () => {
    const ordered = orderMounts([m("rw", "/h"), m("hide", "/h"), m("hide-always", "/s"), m("rw", "/s")]);
    expect(ordered.map((x) => `${x.kind} ${x.dest}`)).toEqual(["hide /h", "rw /h", "rw /s", "hide-always /s"]);
  });

  it("a skill root inside the workspace stays read-only", () => {
    const ordered = orderMounts([m("ro", "/w/.agents/skills"), m("rw", "/w")]);
    expect(ordered.map((x) => x.kind)).toEqual(["rw", "ro"]);
  });
});
