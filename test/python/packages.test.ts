import { describe, expect, it } from "vitest";
import { judgePackages, packageName, packageProblem, packagesProblem, splitPackages, uniquePackages } from "../../src/python/packages.js";
import { MAX_EXTRA_PACKAGES, MAX_PACKAGE_REQUIREMENT_LENGTH } from "../../src/python/limits.js";
import { validateSettings } from "../../src/settings/index.js";

describe("X B the extra packages albedo setup installs are plain requirements from the index", () => {
  it("accepts names with extras and version specifiers", () => {
    for (const text of ["numpy", "pandas>=2,<3", "pandas >= 2 , < 3", "Pillow", "matplotlib==3.9.*", "pandas[excel, performance]~=2.2", "zope.interface", "typing_extensions===4.12.2"]) {
      expect(packageProblem(text), text).toBeUndefined();
    }
  });

  it("refuses pip options, files, URLs, paths, markers and anything else", () => {
    const refused: Record<string, RegExp> = {
      "-r requirements.txt": /is a pip option/,
      "--index-url=http://evil/simple": /is a pip option/,
      "-e .": /is a pip option/,
      "numpy @ https://evil.example/numpy.whl": /names a URL, a path or a marker/,
      "git+https://github.com/x/y": /names a URL, a path or a marker/,
      "./local/pkg": /names a URL, a path or a marker/,
      "/tmp/pkg.whl": /names a URL, a path or a marker/,
      'numpy; python_version < "3.12"': /names a URL, a path or a marker/,
      "numpy pandas": /is not a requirement such as/,
      "numpy>=": /is not a requirement such as/,
      "pandas[": /is not a requirement such as/,
      "numpy\n-r x": /is not a requirement such as/,
      "": /must not be empty/,
      "   ": /must not be empty/,
    };
    for (const [text, message] of Object.entries(refused)) expect(packageProblem(text), text).toMatch(message);
    expect(packageProblem(7)).toMatch(/must be a requirement string/);
  });

  it("bounds one requirement at MAX_PACKAGE_REQUIREMENT_LENGTH characters and a list at MAX_EXTRA_PACKAGES", () => {
    const atBound = `p${"a".repeat(MAX_PACKAGE_REQUIREMENT_LENGTH - 1)}`;
    expect(packageProblem(atBound)).toBeUndefined();
    expect(packageProblem(`${atBound}a`)).toBe(`a package has ${MAX_PACKAGE_REQUIREMENT_LENGTH + 1} characters; at most ${MAX_PACKAGE_REQUIREMENT_LENGTH} (MAX_PACKAGE_REQUIREMENT_LENGTH)`);
    const names = Array.from({ length: MAX_EXTRA_PACKAGES }, (_, i) => `pkg${i}`);
    expect(packagesProblem(names)).toBeUndefined();
    expect(packagesProblem([...names, "one-more"])).toBe(`lists ${MAX_EXTRA_PACKAGES + 1} packages; at most ${MAX_EXTRA_PACKAGES} (MAX_EXTRA_PACKAGES)`);
    expect(packagesProblem(["numpy", "-r x"])).toMatch(/"-r x" is a pip option/);
  });

  it("splits --with at the commas between packages, not inside [extras] or between specifiers", () => {
    expect(splitPackages("numpy,pandas,matplotlib")).toEqual(["numpy", "pandas", "matplotlib"]);
    expect(splitPackages(" numpy , pandas>=2,<3,pandas[excel,performance]>=2,scipy, ")).toEqual(["numpy", "pandas>=2,<3", "pandas[excel,performance]>=2", "scipy"]);
  });

  it("names each package as pip compares names, keeps the first of each, and judges it against installed versions", () => {
    expect(packageName("Zope.Interface>=5")).toBe("zope-interface");
    expect(uniquePackages([["pandas>=2", "numpy"], ["Pandas", "pillow"]])).toEqual(["pandas>=2", "numpy", "pillow"]);
    const installed = { numpy: "2.1.0", pandas: "1.5.3", pillow: null, matplotlib: "3.9.2" };
    expect(judgePackages(["numpy", "pandas>=2", "pillow", "matplotlib~=3.9"], installed).map((state) => [state.name, state.version, state.met])).toEqual([
      ["numpy", "2.1.0", true],
      ["pandas", "1.5.3", false],
      ["pillow", null, false],
      ["matplotlib", "3.9.2", true],
    ]);
  });
});

describe("D-4 B python.packages is a global setting of checked requirements", () => {
  it("is accepted in the global settings and refused in the project and session scopes", () => {
    expect(validateSettings({ python: { packages: ["numpy", "pandas>=2"] } }, "global")).toMatchObject({ ok: true });
    for (const scope of ["project", "session"] as const) {
      expect(validateSettings({ python: { packages: ["numpy"] } }, scope)).toEqual({ ok: false, problems: [{ path: "python.packages", message: `only the global settings may name packages, not the ${scope} scope` }] });
    }
  });

  it("names every bad entry by its path, the list past MAX_EXTRA_PACKAGES, and unknown fields", () => {
    const bad = validateSettings({ python: { packages: ["numpy", "-r evil.txt", 3, "x @ http://evil"] } }, "global");
    expect(bad.ok ? [] : bad.problems.map((problem) => problem.path)).toEqual(["python.packages[1]", "python.packages[2]", "python.packages[3]"]);
    const long = validateSettings({ python: { packages: Array.from({ length: MAX_EXTRA_PACKAGES + 1 }, (_, i) => `p${i}`) } }, "global");
    expect(long).toEqual({ ok: false, problems: [{ path: "python.packages", message: `lists ${MAX_EXTRA_PACKAGES + 1} packages; at most ${MAX_EXTRA_PACKAGES} (MAX_EXTRA_PACKAGES)` }] });
    expect(validateSettings({ python: { package: ["numpy"] } }, "global")).toMatchObject({ ok: false, problems: [{ path: "python.package", message: "unknown field; python allows packages" }] });
    expect(validateSettings({ python: { packages: "numpy" } }, "global")).toMatchObject({ ok: false, problems: [{ path: "python.packages" }] });
  });
});
