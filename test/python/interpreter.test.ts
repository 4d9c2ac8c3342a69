import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertKernelReady,
  MIN_IPYKERNEL_MAJOR,
  managedVenvDir,
  pythonCandidate,
  PythonUnavailableError,
  resolvePython,
} from "../../src/python/index.js";
import { compareVersions, readRequirements, satisfies } from "../../src/python/requirements.js";
import { bareVenv, cleanEnv, MAIN_VENV_PYTHON } from "./helpers.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-python-");
let barePython: string;

beforeAll(() => {
  barePython = bareVenv(join(temps.make(), "bare"));
});
afterAll(() => temps.cleanup());

describe("K-1 interpreter resolution", () => {
  it("uses ALBEDO_PYTHON and reports ipykernel >= 7 and pyzmq with versions", async () => {
    const status = await resolvePython(cleanEnv({ ALBEDO_PYTHON: MAIN_VENV_PYTHON }));
    expect(status.source).toBe("ALBEDO_PYTHON");
    expect(status.path).toBe(MAIN_VENV_PYTHON);
    expect(status.kernelReady).toBe(true);
    expect(status.ipykernel.importable).toBe(true);
    expect(compareVersions(status.ipykernel.version!, String(MIN_IPYKERNEL_MAJOR))).toBeGreaterThanOrEqual(0);
    expect(status.pyzmq.importable).toBe(true);
    expect(status.pyzmq.version).toMatch(/^\d+\./);
    expect(status.isVenv).toBe(true);
  });

  it("refuses an ALBEDO_PYTHON that does not exist, naming it and the fix", async () => {
    const missing = join(temps.make(), "no-such-python");
    const error = await resolvePython(cleanEnv({ ALBEDO_PYTHON: missing })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PythonUnavailableError);
    expect((error as Error).message).toBe(`ALBEDO_PYTHON=${missing} does not exist`);
    expect((error as PythonUnavailableError).fix).toMatch(/albedo setup/);
  });

  it("reports an interpreter without ipykernel as not kernel-ready, and assertKernelReady refuses it", async () => {
    const env = cleanEnv({ ALBEDO_PYTHON: barePython });
    const status = await resolvePython(env);
    expect(status.kernelReady).toBe(false);
    expect(status.ipykernel.importable).toBe(false);
    expect(status.ipykernel.error).toMatch(/ModuleNotFoundError/);
    expect(() => assertKernelReady(status)).toThrow(/cannot run a kernel: missing ipykernel>=7/);
  });

  it("falls back to settings, then to the managed venv under the install dir", () => {
    expect(pythonCandidate(cleanEnv({}), { python: barePython })).toEqual({ path: barePython, source: "settings" });
    expect(pythonCandidate(cleanEnv({}))).toEqual({ path: join(managedVenvDir(), "bin", "python"), source: "managed" });
    expect(pythonCandidate(cleanEnv({ ALBEDO_PYTHON: MAIN_VENV_PYTHON }), { python: barePython }).source).toBe("ALBEDO_PYTHON");
  });
});

describe("K-1 kernel requirements file", () => {
  it("parses the shipped requirements and judges versions numerically", () => {
    const requirements = readRequirements(join(managedVenvDir(), "..", "kernel", "requirements.txt"));
    const ipykernel = requirements.find((r) => r.name === "ipykernel");
    expect(ipykernel?.checkable).toBe(true);
    expect(satisfies(ipykernel!, "7.4.0")).toBe(true);
    expect(satisfies(ipykernel!, "6.29.5")).toBe(false);
    expect(satisfies(ipykernel!, undefined)).toBe(false);
    expect(compareVersions("10.0", "9.9")).toBeGreaterThan(0);
  });
});
