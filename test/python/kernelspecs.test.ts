import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { findKernelSpec, kernelSpecDirs, KernelSpecError, listKernelSpecs, resolveKernelLaunch } from "../../src/kernel/kernelspecs.js";
import { MAX_KERNEL_JSON_BYTES } from "../../src/kernel/limits.js";
import { PythonUnavailableError } from "../../src/python/index.js";
import { bareVenv, cleanEnv, MAIN_VENV_PYTHON } from "./helpers.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-python-");
const venvTemps = tempDirs("albedo-python-");
let barePython: string;

beforeAll(() => {
  barePython = bareVenv(join(venvTemps.make(), "bare"));
});
afterAll(() => venvTemps.cleanup());
afterEach(() => temps.cleanup());

const validSpec = (displayName: string, extra: Record<string, unknown> = {}) => ({
  argv: ["python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
  display_name: displayName,
  language: "python",
  ...extra,
});

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Writes <dataDir>/kernels/<name>/kernel.json with `content` (an object is JSON-encoded). */
function writeSpec(dataDir: string, name: string, content: unknown): string {
  const dir = join(dataDir, "kernels", name);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "kernel.json");
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

/** A sandboxed Jupyter layout: two JUPYTER_PATH entries, a data dir, a home; the interpreter is a bare venv. */
function layout() {
  const root = temps.make("albedo-kernelspecs-");
  const dirs = { first: join(root, "path1"), second: join(root, "path2"), data: join(root, "data"), home: join(root, "home") };
  mkdirSync(dirs.home);
  const env = cleanEnv({ HOME: dirs.home, JUPYTER_PATH: `${dirs.first}:${dirs.second}`, JUPYTER_DATA_DIR: dirs.data, ALBEDO_PYTHON: barePython });
  return { ...dirs, env };
}

describe("K-1 kernelspec search path", () => {
  it("orders JUPYTER_PATH entries, then the user data dir, the environment, system dirs and ~/.ipython", () => {
    const { first, second, data, home, env } = layout();
    const venvPrefix = join(barePython, "..", "..");
    const dirs = kernelSpecDirs(env);
    // A venv the user owns is preferred over the user dir, as jupyter_core does.
    expect(dirs).toEqual([
      join(first, "kernels"),
      join(second, "kernels"),
      join(venvPrefix, "share", "jupyter", "kernels"),
      join(data, "kernels"),
      "/usr/local/share/jupyter/kernels",
      "/usr/share/jupyter/kernels",
      join(home, ".ipython", "kernels"),
    ]);
    const userFirst = kernelSpecDirs({ ...env, JUPYTER_PREFER_ENV_PATH: "0" });
    expect(userFirst.indexOf(join(data, "kernels"))).toBeLessThan(userFirst.indexOf(join(venvPrefix, "share", "jupyter", "kernels")));
  });

  it("defaults the user data dir to ~/.local/share/jupyter and honours XDG_DATA_HOME", () => {
    const { home, env } = layout();
    const plain = { ...env, JUPYTER_DATA_DIR: undefined };
    expect(kernelSpecDirs(plain)).toContain(join(home, ".local", "share", "jupyter", "kernels"));
    expect(kernelSpecDirs({ ...plain, XDG_DATA_HOME: join(home, "xdg") })).toContain(join(home, "xdg", "jupyter", "kernels"));
  });
});

describe("K-1 kernelspec discovery", () => {
  it("lists valid kernelspecs; an earlier directory wins a name, compared case-insensitively", async () => {
    const { first, second, data, env } = layout();
    writeSpec(first, "Alpha", validSpec("Alpha first"));
    writeSpec(second, "alpha", validSpec("Alpha second"));
    writeSpec(data, "beta", validSpec("Beta", { interrupt_mode: "message", env: { A: "1" } }));
    const listing = await listKernelSpecs(env);
    expect(listing.problems).toEqual([]);
    expect(listing.specs.map((s) => [s.name, s.spec.displayName])).toEqual([["alpha", "Alpha first"], ["beta", "Beta"]]);
    const beta = listing.specs[1]!.spec;
    expect(beta.interruptMode).toBe("message");
    expect(beta.env).toEqual({ A: "1" });
    expect(listing.specs[0]!.spec.interruptMode).toBe("signal");
  });

  it("reports malformed, placeholder-less and oversized kernel.json files by path without hiding the others", async () => {
    const { first, data, env } = layout();
    const broken = writeSpec(first, "broken", "{ not json");
    const noPlaceholder = writeSpec(first, "noplace", validSpec("No placeholder", { argv: ["python3", "-m", "ipykernel_launcher"] }));
    const badFields = writeSpec(first, "badfields", { argv: ["x", "{connection_file}"], display_name: "", interrupt_mode: "poke", env: { A: 1 } });
    const huge = writeSpec(first, "huge", validSpec("x".repeat(MAX_KERNEL_JSON_BYTES)));
    writeSpec(data, "good", validSpec("Good"));
    const listing = await listKernelSpecs(env);
    expect(listing.specs.map((s) => s.name)).toEqual(["good"]);
    const byName = new Map(listing.problems.map((p) => [p.name, p]));
    expect(byName.get("broken")?.message).toMatch(new RegExp(`^${escape(broken)}: kernel.json is not valid JSON`));
    expect(byName.get("noplace")?.message).toBe(`${noPlaceholder}: malformed kernel.json: argv must contain the {connection_file} placeholder`);
    expect(byName.get("badfields")?.message).toBe(
      `${badFields}: malformed kernel.json: display_name must be a non-empty string; language must be a non-empty string; ` +
        `interrupt_mode must be "signal" or "message", got "poke"; env must be an object mapping names to strings`,
    );
    expect(byName.get("huge")?.message).toMatch(new RegExp(`^${escape(huge)}: kernel.json is \\d+ bytes, over MAX_KERNEL_JSON_BYTES=${MAX_KERNEL_JSON_BYTES}`));
  });

  it("finds one kernelspec by name, returns undefined when absent, and throws on a malformed or invalid name", async () => {
    const { first, env } = layout();
    writeSpec(first, "mine", validSpec("Mine"));
    const broken = writeSpec(first, "broken", "[]");
    expect((await findKernelSpec("MINE", env))?.spec.displayName).toBe("Mine");
    expect(await findKernelSpec("absent", env)).toBeUndefined();
    await expect(findKernelSpec("broken", env)).rejects.toThrow(`${broken}: kernel.json must hold a JSON object`);
    await expect(findKernelSpec("../etc", env)).rejects.toBeInstanceOf(KernelSpecError);
  });
});

describe("K-1 kernel launch choice", () => {
  it("launches a named kernelspec with its argv, env and interrupt mode, substituting {resource_dir}", async () => {
    const { first, env } = layout();
    const file = writeSpec(first, "custom", validSpec("Custom", {
      argv: ["python3", "{resource_dir}/launch.py", "-f", "{connection_file}"],
      interrupt_mode: "message",
      env: { CUSTOM: "yes" },
    }));
    const launch = await resolveKernelLaunch({ kernelspec: "custom" }, env);
    expect(launch).toEqual({
      argv: ["python3", `${join(first, "kernels", "custom")}/launch.py`, "-f", "{connection_file}"],
      env: { CUSTOM: "yes" },
      interruptMode: "message",
      displayName: "Custom",
      source: `kernelspec custom (${file})`,
    });
    await expect(resolveKernelLaunch({ kernelspec: "nope" }, env)).rejects.toThrow(/no kernelspec named "nope" in /);
  });

  it("defaults to the resolved interpreter running ipykernel_launcher", async () => {
    const { env } = layout();
    const launch = await resolveKernelLaunch({}, { ...env, ALBEDO_PYTHON: MAIN_VENV_PYTHON });
    expect(launch.argv).toEqual([MAIN_VENV_PYTHON, "-m", "ipykernel_launcher", "-f", "{connection_file}"]);
    expect(launch.interruptMode).toBe("signal");
    expect(launch.source).toBe(`ALBEDO_PYTHON=${MAIN_VENV_PYTHON}`);
    const explicit = await resolveKernelLaunch({ python: MAIN_VENV_PYTHON }, env);
    expect(explicit.argv[0]).toBe(MAIN_VENV_PYTHON);
  });

  it("refuses an interpreter without ipykernel with a clear error", async () => {
    const { env } = layout();
    const error = await resolveKernelLaunch({}, env).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PythonUnavailableError);
    expect((error as Error).message).toMatch(new RegExp(`^ALBEDO_PYTHON=${escape(barePython)} cannot run a kernel: missing ipykernel>=7`));
  });
});
