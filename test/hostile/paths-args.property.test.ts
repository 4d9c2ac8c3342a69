import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_ARGUMENT_TEXT_BYTES, resolveArguments, splitArguments } from "../../src/commands/args.js";
import type { ArgumentSpec, CommandDeclaration } from "../../src/commands/types.js";
import { AppError } from "../../src/errors/index.js";
import { checkResourcePath } from "../../src/skills/resourcePath.js";
import { MAX_RESOURCE_PATH_LENGTH } from "../../src/skills/limits.js";
import { PROPERTY_RUNS, argumentText, pathish } from "./arbitraries.js";

/** A skill directory the accepted segments are joined onto. */
const BASE = "/srv/skills/demo";

/** The thrown AppError's code, or undefined when `run` returned; anything else thrown fails the test. */
function appErrorCode(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return (error as AppError).code;
  }
}

/** Whether a path as written tries something R-3 forbids (ignoring length and depth bounds). */
function forbidden(resource: string): boolean {
  return (
    resource === "" ||
    resource.startsWith("/") ||
    resource.includes("\0") ||
    resource.includes("\\") ||
    resource.split("/").some((segment) => segment === "" || segment === "." || segment === "..")
  );
}

describe("R-3 resource path check", () => {
  it("anything accepted is relative, clean and joins to a path under the skill directory", () => {
    fc.assert(
      fc.property(pathish, (resource) => {
        let segments: string[] | undefined;
        const code = appErrorCode(() => (segments = checkResourcePath(resource)));
        if (code !== undefined) {
          expect(["invalid_params", "limit_exceeded"]).toContain(code);
          return;
        }
        expect(forbidden(resource)).toBe(false);
        expect(segments!.join("/")).toBe(resource);
        for (const segment of segments!) {
          expect(segment).not.toBe("");
          expect(segment).not.toBe("..");
          expect(segment).not.toContain("\0");
          expect(segment).not.toContain("\\");
        }
        const joined = path.join(BASE, ...segments!);
        expect(joined.startsWith(`${BASE}/`)).toBe(true);
        expect(path.relative(BASE, joined).split(path.sep)).not.toContain("..");
      }),
      { numRuns: PROPERTY_RUNS * 3 },
    );
  });

  it("anything absolute, empty, climbing, or holding NUL or a backslash is refused with invalid_params", () => {
    const hostile = fc
      .tuple(pathish, fc.constantFrom("/", "../", "a/../", "\0", "\\", "a//", "./", ""), fc.boolean())
      .map(([rest, poison, front]) => (front ? `${poison}${rest}` : `${rest}${poison === "../" ? "/.." : poison}`))
      .filter(forbidden);
    fc.assert(
      fc.property(hostile, (resource) => {
        expect(resource.length).toBeLessThanOrEqual(MAX_RESOURCE_PATH_LENGTH);
        expect(appErrorCode(() => checkResourcePath(resource))).toBe("invalid_params");
      }),
      { numRuns: PROPERTY_RUNS * 3 },
    );
  });

  it("refuses non-strings with invalid_params", () => {
    fc.assert(
      fc.property(fc.anything().filter((v) => typeof v !== "string"), (value) => {
        expect(appErrorCode(() => checkResourcePath(value))).toBe("invalid_params");
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });
});

/** Whitespace-separated tokens, split the way C-3 defines a token. */
function tokens(text: string): string[] {
  return text.split(/\s+/).filter((token) => token.length > 0);
}

const specs: fc.Arbitrary<ArgumentSpec[]> = fc
  .uniqueArray(fc.constantFrom("target", "query", "path", "mode", "rest"), { minLength: 1, maxLength: 5 })
  .chain((names) => fc.tuple(...names.map((name) => fc.boolean().map((required) => ({ name, help: `the ${name}`, required })))));

function command(args: readonly ArgumentSpec[]): CommandDeclaration {
  return { name: "/probe", description: "a probe", arguments: args, callers: ["user", "model"], submitsTurn: false };
}

describe("C-3 argument splitting", () => {
  it("leading arguments take one token each; the last takes the rest, trimmed, inner whitespace kept", () => {
    fc.assert(
      fc.property(specs, argumentText, (args, raw) => {
        const values = splitArguments(args, raw);
        const all = tokens(raw);
        const leading = args.slice(0, -1);
        leading.forEach((spec, i) => expect(values[spec.name]).toBe(all[i]));
        const last = values[args.at(-1)!.name];
        const rest = all.slice(leading.length);
        if (rest.length === 0) {
          expect(last).toBeUndefined();
          return;
        }
        expect(last).toBe(last!.trim());
        expect(raw.includes(last!)).toBe(true);
        expect(tokens(last!)).toEqual(rest);
        const rejoined = [...leading.map((spec) => values[spec.name]!), last!].join(" ");
        expect(tokens(rejoined)).toEqual(tokens(raw.trim()));
      }),
      { numRuns: PROPERTY_RUNS * 2 },
    );
  });

  it("resolveArguments throws only AppError invalid_params or limit_exceeded, for any input", () => {
    const input = fc.oneof(
      argumentText,
      fc.string({ unit: "binary", minLength: MAX_ARGUMENT_TEXT_BYTES / 4, maxLength: MAX_ARGUMENT_TEXT_BYTES / 2 }).map((s) => s.repeat(3)),
      fc.dictionary(fc.constantFrom("target", "query", "path", "mode", "rest", "other", "__proto__", "constructor"), fc.anything()),
      fc.anything(),
    );
    fc.assert(
      fc.property(fc.oneof(specs, fc.constant([] as ArgumentSpec[])), input, (args, value) => {
        let resolved: unknown;
        const code = appErrorCode(() => (resolved = resolveArguments(command(args), value)));
        if (code !== undefined) {
          expect(["invalid_params", "limit_exceeded"]).toContain(code);
          return;
        }
        const known = new Set(args.map((spec) => spec.name));
        for (const [key, val] of Object.entries(resolved as Record<string, unknown>)) {
          expect(known.has(key)).toBe(true);
          expect(typeof val).toBe("string");
        }
        for (const spec of args.filter((s) => s.required)) expect(typeof (resolved as Record<string, unknown>)[spec.name]).toBe("string");
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });
});
