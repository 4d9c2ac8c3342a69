/**
 * The web page's copy of the HTTP contract: generated from the route declarations and their
 * schemas, committed, and the same as what the generator writes now; the printer behind it writes
 * each schema as the TypeScript type it means, or refuses.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { API, MAX_TRANSCRIPT_PAGE_ROWS, OPENAPI_COMMAND, WEB_COOKIE_LOST, WEB_LOGIN_PATH, WEB_PAGE_HEADER, WEB_PAGE_PROTOCOL_PREFIX, WEB_STREAM_PROTOCOL } from "../../src/api/index.js";
import { PAGE_CONTRACT_FILE, pageContract } from "../../src/api/pageContract.js";
import { schemaType } from "../../src/api/schemaTypes.js";
import * as page from "../../web/src/generated/contract.js";

const ROOT = join(import.meta.dirname, "..", "..");

describe("W-3 the page's contract, generated from the daemon's declarations", () => {
  it(`has a committed copy (${PAGE_CONTRACT_FILE}) equal to what the generator makes now`, () => {
    const committed = readFileSync(join(ROOT, PAGE_CONTRACT_FILE), "utf8");
    expect(committed === pageContract(), `${PAGE_CONTRACT_FILE} is stale: run \`${OPENAPI_COMMAND}\` and commit it`).toBe(true);
  });

  it("names every route with its method and path, and the login protocol and page bound as the runtime holds them", () => {
    expect(page.ROUTES).toEqual(Object.fromEntries(Object.entries(API).map(([name, spec]) => [name, { method: spec.method, path: spec.path }])));
    expect([page.WEB_PAGE_HEADER, page.WEB_STREAM_PROTOCOL, page.WEB_PAGE_PROTOCOL_PREFIX, page.WEB_LOGIN_PATH, page.WEB_COOKIE_LOST, page.MAX_TRANSCRIPT_PAGE_ROWS]).toEqual([
      WEB_PAGE_HEADER, WEB_STREAM_PROTOCOL, WEB_PAGE_PROTOCOL_PREFIX, WEB_LOGIN_PATH, WEB_COOKIE_LOST, MAX_TRANSCRIPT_PAGE_ROWS,
    ]);
  });

  it("types each route's parts and answer from its declaration", () => {
    const text = pageContract();
    const member = (name: string) => new RegExp(`readonly ${name}: \\{\\n([\\s\\S]*?)\\n  \\};`).exec(text)?.[1];
    expect(member("patchCatalog")).toBe(
      ["    readonly params: { readonly id: string };", "    readonly body: CatalogPatchBody;", "    readonly ifMatch: true;", "    readonly answer: Catalog;"].join("\n"),
    );
    expect(member("getImage")).toBe(["    readonly params: { readonly id: string; readonly image_id: string };", '    readonly bytes: "image/*";'].join("\n"));
    expect(member("stream")).toContain("readonly message: StreamMessage;");
    expect(member("interrupt")).toContain("readonly answer: undefined;");
    expect(member("getTranscript")).toContain("readonly limit?: number;");
  });
});

describe("W-3 the page's contract: JSON Schema as TypeScript", () => {
  it("writes objects (optional unless required), arrays, records, unions, literals and references, read-only", () => {
    const schema = {
      type: "object",
      properties: {
        id: { type: "string", minLength: 1, description: "the id" },
        count: { type: "integer", minimum: 0 },
        tags: { type: "array", items: { type: "string", enum: ["a", "b"] } },
        state: { anyOf: [{ $ref: "#/components/schemas/State" }, { type: "null" }] },
        kind: { type: "string", const: "x" },
        extra: { type: "object", propertyNames: { type: "string" }, additionalProperties: { type: "boolean" } },
        any: {},
      },
      required: ["id", "tags"],
      additionalProperties: false,
    };
    expect(schemaType(schema, "T")).toBe(
      [
        "{",
        "  /** the id */",
        "  readonly id: string;",
        "  readonly count?: number;",
        '  readonly tags: readonly ("a" | "b")[];',
        "  readonly state?: State | null;",
        '  readonly kind?: "x";',
        "  readonly extra?: {",
        "    readonly [key: string]: boolean;",
        "  };",
        "  readonly any?: unknown;",
        "}",
      ].join("\n"),
    );
  });

  it("flattens a union of unions, and keeps named properties beside others of any type", () => {
    expect(schemaType({ anyOf: [{ oneOf: [{ type: "string" }, { type: "number" }] }, { type: "null" }] }, "T")).toBe("string | number | null");
    expect(schemaType({ type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: {} }, "T")).toBe(
      "{\n  readonly a: string;\n  readonly [key: string]: unknown;\n}",
    );
  });

  it("refuses what it cannot write, naming where it stood", () => {
    expect(() => schemaType({ type: "object", properties: { a: { allOf: [{ type: "string" }] } } }, "Body")).toThrow('Body.a: no TypeScript for the JSON Schema keyword "allOf"');
    expect(() => schemaType({ type: "array", items: { not: {} } }, "List")).toThrow('List[]: no TypeScript for the JSON Schema keyword "not"');
    expect(() => schemaType({ $ref: "#/$defs/x" }, "R")).toThrow('no TypeScript name for the reference "#/$defs/x"');
    expect(() => schemaType({ type: "object", properties: { a: { type: "string" } }, additionalProperties: { type: "number" } }, "M")).toThrow(
      "M: named properties beside additional ones of type number",
    );
  });
});
