/**
 * The web console's page takes the HTTP contract from a module generated here: every route by
 * name with its method and path, the TypeScript type of what each takes and answers, the login
 * protocol's names and the bounds the page reads with. The page is built for a browser, so it
 * cannot import the zod schemas (nor the Node code they reach); this writes what they say as plain
 * TypeScript, converted to JSON Schema as the OpenAPI document converts them (with a few more
 * names) and printed as types. `npm run openapi` writes it with docs/openapi.json; a test fails
 * when the committed file differs.
 */
import { MAX_TRANSCRIPT_PAGE_ROWS } from "./limits.js";
import { OPENAPI_COMMAND, Schemas } from "./openapi.js";
import { ImageResource, TranscriptPage, TranscriptRowResource, WebLoginResource } from "./resources.js";
import { API } from "./routes.js";
import type { RouteSpec } from "./routeSpec.js";
import { docComment, schemaType } from "./schemaTypes.js";
import { WEB_COOKIE_LOST, WEB_LOGIN_PATH, WEB_PAGE_HEADER, WEB_PAGE_PROTOCOL_PREFIX, WEB_STREAM_PROTOCOL } from "./webProtocol.js";

/** The committed module, relative to the package root. */
export const PAGE_CONTRACT_FILE = "web/src/generated/contract.ts";

/** The facts the page needs besides the routes: the login protocol's names and the transcript's page bound. */
const PAGE_CONSTANTS: Readonly<Record<string, string | number>> = {
  WEB_PAGE_HEADER, WEB_STREAM_PROTOCOL, WEB_PAGE_PROTOCOL_PREFIX, WEB_LOGIN_PATH, WEB_COOKIE_LOST, MAX_TRANSCRIPT_PAGE_ROWS,
};

/** Resources the OpenAPI document writes inline, named here so that the page can name them too (and each is written once). */
const PAGE_COMPONENTS = { TranscriptPage, TranscriptRow: TranscriptRowResource, Image: ImageResource, WebLogin: WebLoginResource };

/** The page's module: constants, the route table, what each route takes and answers, and every named schema as a type. */
export function pageContract(): string {
  const schemas = new Schemas(PAGE_COMPONENTS);
  const routes = Object.entries(API as Readonly<Record<string, RouteSpec>>);
  return [
    `// Generated from the daemon's HTTP contract by \`${OPENAPI_COMMAND}\` (src/api/pageContract.ts); do not edit.`,
    "// The web page's copy of the contract, in plain TypeScript: the page imports nothing of the runtime.",
    "",
    "// The login protocol's names (src/api/webProtocol.ts) and the transcript's page bound (src/api/limits.ts).",
    ...Object.entries(PAGE_CONSTANTS).map(([name, value]) => `export const ${name} = ${JSON.stringify(value)};`),
    "",
    "/** Every route of the daemon by name: its method, and its path with `{name}` for each parameter. */",
    "export const ROUTES = {",
    ...routes.map(([name, spec]) => `  ${name}: { method: ${JSON.stringify(spec.method)}, path: ${JSON.stringify(spec.path)} },`),
    "} as const;",
    "",
    "/**",
    " * What each route takes (`params`, `query`, `body`, and `ifMatch` when it needs If-Match) and what",
    " * it answers: JSON as `answer` (undefined: no body), bytes of the media type `bytes`, or on a",
    " * WebSocket, each `message`.",
    " */",
    "export interface RouteTypes {",
    ...routes.map(([name, spec]) => routeTypes(name, spec, schemas)),
    "}",
    ...Object.entries(schemas.components).flatMap(([name, schema]) => ["", `${docComment((schema as { description?: unknown }).description, "")}export type ${name} =${spaced(schemaType(schema, name))};`]),
    "",
  ].join("\n");
}

/** A type after `=` or `:`: on the same line, or from the next one when it is a union written one member a line. */
const spaced = (type: string): string => (type.startsWith("\n") ? type : ` ${type}`);

/** One route's member of RouteTypes. */
function routeTypes(name: string, spec: RouteSpec, schemas: Schemas): string {
  const parts: [string, string][] = [];
  const params = [...spec.path.matchAll(/\{([a-z_]+)\}/g)].map((match) => match[1]!);
  if (params.length > 0) parts.push(["params", `{ ${params.map((param) => `readonly ${param}: string`).join("; ")} }`]);
  if (spec.query !== undefined) parts.push(["query", schemaType(schemas.ref(spec.query, "input"), `${name} query`, "    ")]);
  if (spec.body !== undefined) parts.push(["body", schemaType(schemas.ref(spec.body, "input"), `${name} body`, "    ")]);
  if (spec.ifMatch) parts.push(["ifMatch", "true"]);
  parts.push(success(name, spec, schemas));
  const members = parts.map(([key, type]) => `    readonly ${key}:${spaced(type)};\n`).join("");
  return `${docComment(spec.summary, "  ")}  readonly ${name}: {\n${members}  };`;
}

/** The route's one successful answer as a member: `answer` (JSON or none), `bytes` or `message`. */
function success(name: string, spec: RouteSpec, schemas: Schemas): [string, string] {
  const statuses = Object.keys(spec.responses).filter((status) => Number(status) < 300);
  if (statuses.length !== 1) throw new Error(`${name} declares ${statuses.length} successful answers; the page's client expects one`);
  const response = spec.responses[Number(statuses[0])]!;
  if (response.websocket !== undefined) return ["message", schemaType(schemas.ref(response.websocket, "output"), `${name} message`, "    ")];
  if (response.raw !== undefined) return ["bytes", JSON.stringify(response.raw)];
  return ["answer", response.schema === undefined ? "undefined" : schemaType(schemas.ref(response.schema, "output"), `${name} answer`, "    ")];
}
