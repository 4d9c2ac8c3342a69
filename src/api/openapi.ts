/**
 * The daemon's API as an OpenAPI 3.1 document, generated from the route declarations (routes.ts) and
 * their zod schemas. `GET /openapi.json` serves it; docs/openapi.json is the same document,
 * written by `npm run openapi` and checked by a test.
 */
import { z } from "zod";
import { API, API_VERSION } from "./routes.js";
import * as bodies from "./bodies.js";
import { PROBLEMS, PROBLEM_CONTENT_TYPE, type ProblemCode } from "./problems.js";
import * as resources from "./resources.js";
import type { ResponseSpec, RouteAccess, RouteSpec } from "./routeSpec.js";
import { WEB_PAGE_HEADER } from "./webProtocol.js";

/** The committed copy, relative to the package root. */
export const OPENAPI_FILE = "docs/openapi.json";
/** What rewrites the committed copy. */
export const OPENAPI_COMMAND = "npm run openapi";

type Json = Record<string, unknown>;

/** Problems any route may answer with: the token, the body's encoding, size and shape, and the daemon's own faults. */
const COMMON_PROBLEMS: readonly ProblemCode[] = [
  "unauthorized", "web_cookie_lost", "route_not_found", "method_not_allowed", "invalid_json", "invalid_body", "too_deep", "payload_too_large", "unsupported_media_type",
  "insufficient_storage", "storage_busy", "storage_unavailable", "internal_error",
];

/** Named schemas: what the document's components hold, each written once and referenced. */
const RESPONSE_COMPONENTS: Readonly<Record<string, z.ZodType>> = {
  JsonValue: resources.JsonValue,
  Settings: resources.SettingsValue,
  Kernel: resources.KernelResource,
  Command: resources.CommandResource,
  Session: resources.SessionResource,
  CreatedSession: resources.CreatedSession,
  SessionList: resources.SessionList,
  Output: resources.OutputResource,
  ExecuteAnswer: resources.ExecuteAnswer,
  ReloadAnswer: resources.ReloadAnswer,
  Catalog: resources.CatalogResource,
  SettingsFile: resources.SettingsFileResource,
  SettingsDocument: resources.SettingsDocument,
  Receipt: resources.ReceiptResource,
  Turn: resources.TurnResource,
  Operation: resources.OperationResource,
  Health: resources.HealthResource,
  StreamMessage: resources.StreamMessage,
  Problem: resources.ProblemDocument,
  OpenApiDocument: resources.OpenApiDocumentResource,
  WebPageLogin: resources.WebPageLogin,
};
const BODY_COMPONENTS: Readonly<Record<string, z.ZodType>> = {
  OpenSessionBody: bodies.OpenSessionBody,
  ExecuteBody: bodies.ExecuteBody,
  CatalogPatchBody: bodies.CatalogPatchBody,
  SettingsPatchBody: bodies.SettingsPatchBody,
  EventBody: bodies.EventBody,
  WebLoginBody: bodies.WebLoginBody,
};

/**
 * Converts schemas to JSON Schema: named ones into components (bodies as read, resources as
 * written), others inline. `more` names further resources: the page's contract names some that
 * the document writes inline.
 */
export class Schemas {
  private readonly names = new Map<z.ZodType, string>();
  readonly components: Json = {};

  constructor(more: Readonly<Record<string, z.ZodType>> = {}) {
    this.register({ ...RESPONSE_COMPONENTS, ...more }, "output");
    this.register(BODY_COMPONENTS, "input");
  }

  private register(named: Readonly<Record<string, z.ZodType>>, io: "input" | "output"): void {
    const registry = z.registry<{ id: string }>();
    for (const [name, schema] of Object.entries(named)) {
      registry.add(schema, { id: name });
      this.names.set(schema, name);
    }
    // JSON values are recursive: give them their one component, also where bodies use them.
    if (!("JsonValue" in named)) registry.add(resources.JsonValue, { id: "JsonValue" });
    const { schemas } = z.toJSONSchema(registry, { io, uri: (id) => `#/components/schemas/${id}`, unrepresentable: "any" });
    for (const [name, schema] of Object.entries(schemas)) if (name !== "__shared") this.components[name] ??= bare(schema as Json);
  }

  /** A reference to the schema's component, or the schema written out. */
  ref(schema: z.ZodType, io: "input" | "output"): Json {
    const name = this.names.get(schema);
    return name === undefined ? bare(z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Json) : { $ref: `#/components/schemas/${name}` };
  }
}

/** A JSON Schema as a component: the dialect and id are the document's, not each schema's. */
function bare(schema: Json): Json {
  const { $schema: _dialect, $id: _id, ...rest } = schema;
  return rest;
}

let built: resources.OpenApiDocumentResource | undefined;

/** The OpenAPI 3.1 document of the whole API, built on first use. */
export function openApiDocument(): resources.OpenApiDocumentResource {
  built ??= resources.OpenApiDocumentResource.parse(buildDocument());
  return built;
}

function buildDocument(): Json {
  const schemas = new Schemas();
  const paths: Record<string, Json> = {};
  for (const [name, spec] of Object.entries(API)) (paths[spec.path] ??= {})[spec.method.toLowerCase()] = operation(name, spec, schemas);
  return {
    openapi: "3.1.0",
    info: { title: "albedo daemon", version: API_VERSION, description: "The HTTP and WebSocket API of `albedo serve`; see docs/http-api.md." },
    security: SECURITY.any,
    paths,
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "the token in daemon.token in the state dir" },
        webPage: { type: "apiKey", in: "header", name: WEB_PAGE_HEADER, description: "a web console login's page secret (POST /web/login), kept by the page alone" },
        webCookie: { type: "apiKey", in: "cookie", name: "albedo_web_PORT", description: "a web console login's cookie, named with the daemon's port; never enough without the page secret" },
      },
      responses: { Problem: { description: "a problem document", content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: "#/components/schemas/Problem" } } } } },
      schemas: schemas.components,
    },
  };
}

function operation(name: string, spec: RouteSpec, schemas: Schemas): Json {
  const parameters = [...pathParameters(spec.path), ...queryParameters(spec, schemas), ...(spec.ifMatch ? [IF_MATCH] : [])];
  const responses: Json = {};
  for (const [status, response] of Object.entries(spec.responses)) responses[status] = answer(response, schemas);
  Object.assign(responses, problemResponses([...spec.problems, ...COMMON_PROBLEMS]));
  return {
    operationId: name,
    summary: spec.summary,
    ...(spec.access === undefined ? {} : { security: SECURITY[spec.access] }),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(spec.body === undefined ? {} : { requestBody: { required: true, content: { "application/json": { schema: schemas.ref(spec.body, "input") } } } }),
    responses,
  };
}

/** Who may call a route of each access (RouteAccess), as OpenAPI says it; `any` is the document's default. */
const SECURITY: Readonly<Record<RouteAccess, readonly Json[]>> = {
  any: [{ bearer: [] }, { webPage: [], webCookie: [] }],
  bearer: [{ bearer: [] }],
  page_secret: [{ bearer: [] }, { webPage: [] }],
  login_code: [{}],
};

const IF_MATCH = { name: "If-Match", in: "header", required: true, description: "the revision last read (its ETag)", schema: { type: "string" } };

function pathParameters(path: string): Json[] {
  return [...path.matchAll(/\{([a-z_]+)\}/g)].map((match) => ({ name: match[1], in: "path", required: true, schema: { type: "string" } }));
}

function queryParameters(spec: RouteSpec, schemas: Schemas): Json[] {
  if (spec.query === undefined) return [];
  const query = schemas.ref(spec.query, "input") as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(query.properties ?? {}).map(([name, schema]) => ({ name, in: "query", required: query.required?.includes(name) ?? false, schema }));
}

function answer(response: ResponseSpec, schemas: Schemas): Json {
  const headers: Json = {
    ...(response.etag ? { ETag: { description: "the resource's revision, quoted; send it back in If-Match", schema: { type: "string" } } } : {}),
    ...(response.location ? { Location: { description: "the new resource's path", schema: { type: "string" } } } : {}),
  };
  return {
    description: response.description,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    ...(response.schema === undefined ? {} : { content: { "application/json": { schema: schemas.ref(response.schema, "output") } } }),
    ...(response.raw === undefined ? {} : { content: { [response.raw]: { schema: { type: "string", format: "binary" } } } }),
    ...(response.websocket === undefined ? {} : { "x-websocket-message": schemas.ref(response.websocket, "output") }),
  };
}

/** One response per status the route's problems use, naming their codes. */
function problemResponses(codes: readonly ProblemCode[]): Json {
  const byStatus = new Map<number, Set<ProblemCode>>();
  for (const code of codes) {
    const status = PROBLEMS[code].status;
    byStatus.set(status, (byStatus.get(status) ?? new Set()).add(code));
  }
  const responses: Json = {};
  for (const [status, found] of [...byStatus].sort(([a], [b]) => a - b)) {
    // A reference may carry its own description (OpenAPI 3.1): each route names the codes it can give.
    responses[String(status)] = { $ref: "#/components/responses/Problem", description: `a problem: ${[...found].map((code) => `\`${code}\``).join(", ")}` };
  }
  return responses;
}
