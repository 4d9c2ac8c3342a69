import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPENAPI_COMMAND, OPENAPI_FILE, openApiDocument } from "../../src/api/index.js";
import type { DaemonContext } from "../../src/daemon/context.js";
import { buildRouter } from "../../src/daemon/http.js";
import { call, ROOT } from "./support/daemon.js";
import { startInProcess, type InProcessDaemon } from "./support/inProcess.js";

let daemon: InProcessDaemon;

beforeAll(async () => {
  daemon = await startInProcess();
});

afterAll(async () => {
  await daemon?.close();
});

type Doc = { paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, unknown>; responses: Record<string, unknown> } };

/** Every `$ref` anywhere in `value`. */
function refs(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refs(item, found);
  else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (key === "$ref" && typeof item === "string") found.push(item);
      else refs(item, found);
    }
  }
  return found;
}

describe("D-1 the OpenAPI document", () => {
  it("is served at GET /openapi.json, authenticated like every route, as the generator makes it", async () => {
    const served = await call(daemon, "GET", "/openapi.json");
    expect(served.status).toBe(200);
    expect(served.body).toEqual(openApiDocument());
    expect(served.body.openapi).toBe("3.1.0");
    expect((await call({ url: daemon.url, token: "wrong" }, "GET", "/openapi.json")).status).toBe(401);
  });

  it(`has a committed copy (${OPENAPI_FILE}) equal to what the generator makes now`, () => {
    const committed = JSON.parse(readFileSync(join(ROOT, OPENAPI_FILE), "utf8")) as unknown;
    const current = JSON.parse(JSON.stringify(openApiDocument())) as unknown;
    expect(committed, `${OPENAPI_FILE} is stale: run \`${OPENAPI_COMMAND}\` and commit it`).toEqual(current);
  });

  it("lists every route the router knows, and nothing else", () => {
    const router = buildRouter({} as DaemonContext);
    const routed = router.routes().map((spec) => `${spec.method} ${spec.path}`).sort();
    const doc = openApiDocument() as unknown as Doc;
    const documented = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`)).sort();
    expect(documented).toEqual(routed);
    expect(new Set(routed).size).toBe(routed.length);
  });

  it("resolves every reference to a schema it holds, and describes each route's body and answers", () => {
    const doc = openApiDocument() as unknown as Doc;
    for (const ref of refs(doc)) {
      const [, kind, name] = /^#\/components\/(schemas|responses)\/(\w+)$/.exec(ref) ?? [];
      expect(kind === "schemas" ? doc.components.schemas : doc.components.responses, ref).toHaveProperty(name ?? "(not a component reference)");
    }
    const openSession = doc.paths["/sessions"]!.post as { requestBody: unknown; responses: Record<string, unknown> };
    expect(openSession.requestBody).toEqual({ required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/OpenSessionBody" } } } });
    expect(Object.keys(openSession.responses)).toEqual(expect.arrayContaining(["201", "400", "401", "429", "503"]));
    expect(JSON.stringify(doc.components.schemas.Receipt)).toContain('"operation_id"');
  });
});
