/**
 * The daemon's HTTP contract: every route, what it takes and what it answers. The daemon's routes
 * bind their handlers to these declarations, the clients call through them, and docs/openapi.json
 * and the web page's contract are generated from them; a route exists only once, here.
 */
import { CatalogPatchBody, EventBody, ExecuteBody, NetworkPatchBody, NetworkQuery, OpenSessionBody, RestartBody, SessionListQuery, SettingsPatchBody, SettingsQuery, TranscriptQuery, WebLoginBody } from "./bodies.js";
import {
  CatalogResource, CreatedSession, ExecuteAnswer, HealthResource, NetworkResource, OpenApiDocumentResource, OperationResource, ReceiptResource, ReloadAnswer, RestartAnswer, SessionList,
  SessionResource, SettingsDocument, SettingsFileResource, StreamMessage, TranscriptPage, WebLoginResource, WebPageLogin,
} from "./resources.js";
import type { RouteSpec } from "./routeSpec.js";

/** The API's version in the OpenAPI document: raised when a shape changes in a way old clients would notice. */
export const API_VERSION = "2";

/** Keeps a declaration's literal types, so handlers and clients are typed by it. */
const route = <const S extends RouteSpec>(spec: S): S => spec;

const NO_CONTENT = { 204: { description: "done" } } as const;

/** Every route of the daemon, by name. */
export const API = {
  health: route({
    method: "GET", path: "/health", summary: "Whether the daemon answers, with its sessions, spares and log counts",
    responses: { 200: { description: "the daemon is up", schema: HealthResource } }, problems: [],
  }),
  openapi: route({
    method: "GET", path: "/openapi.json", summary: "This API as an OpenAPI 3.1 document",
    responses: { 200: { description: "the document (docs/openapi.json in the repository holds the same)", schema: OpenApiDocumentResource } }, problems: [],
  }),
  openSession: route({
    method: "POST", path: "/sessions", summary: "Open a session on a workspace (D-2); with an external kernel, a notebook's kernel joins it (K-13)",
    body: OpenSessionBody,
    responses: { 201: { description: "the session; `rpc` only when the kernel is external", schema: CreatedSession, location: true } },
    problems: ["too_many_sessions", "kernel_unavailable", "settings_file_invalid"],
  }),
  listSessions: route({
    method: "GET", path: "/sessions", summary: "Every open session, and with closed=resumable the closed sessions a resume can start from (K-15)",
    query: SessionListQuery,
    responses: { 200: { description: "the sessions, each as GET /sessions/{id} shows it", schema: SessionList } }, problems: ["invalid_query"],
  }),
  getSession: route({
    method: "GET", path: "/sessions/{id}", summary: "The session resource; rereads the settings files, walks skill files only when they changed (D-2)",
    responses: { 200: { description: "the session", schema: SessionResource } }, problems: ["session_not_found", "settings_file_invalid"],
  }),
  closeSession: route({
    method: "DELETE", path: "/sessions/{id}", summary: "Close the session: its streams end, its kernel shuts down",
    responses: NO_CONTENT, problems: ["session_not_found"],
  }),
  execute: route({
    method: "POST", path: "/sessions/{id}/execute", summary: "Run code in the session's kernel and answer when it ends; outputs also go to the stream",
    body: ExecuteBody,
    responses: { 200: { description: "the execution's outcome and the outputs its bounds keep", schema: ExecuteAnswer } },
    problems: ["session_not_found", "conflict", "kernel_died"],
  }),
  getImage: route({
    method: "GET", path: "/sessions/{id}/images/{image_id}", summary: "The bytes of an image this session kept (an execute answer's or an output row's image id)",
    responses: { 200: { description: "the image, its own media type, cacheable for good (its id is its content's hash)", raw: "image/*" } },
    problems: ["session_not_found", "not_found"],
  }),
  interrupt: route({
    method: "POST", path: "/sessions/{id}/interrupt", summary: "End the running turn as interrupted, or interrupt the running cell; its pending RPC calls are cancelled",
    responses: NO_CONTENT, problems: ["session_not_found", "conflict", "kernel_died"],
  }),
  restart: route({
    method: "POST", path: "/sessions/{id}/restart", summary: "Restart the session's kernel: empty, or with restore loading its checkpoint before the first cell (K-15)",
    body: RestartBody,
    responses: { 200: { description: "what the restore brought back", schema: RestartAnswer } }, problems: ["session_not_found", "conflict", "kernel_died"],
  }),
  reload: route({
    method: "POST", path: "/sessions/{id}/reload", summary: "Rediscover skills and swap catalog and routes; the kernel keeps its state (K-7)",
    responses: { 200: { description: "what the reload changed", schema: ReloadAnswer } }, problems: ["session_not_found"],
  }),
  getCatalog: route({
    method: "GET", path: "/sessions/{id}/catalog", summary: "The management catalog (D-3): every candidate with its preferences; never reloads",
    responses: { 200: { description: "the catalog", schema: CatalogResource, etag: true } }, problems: ["session_not_found", "settings_file_invalid"],
  }),
  patchCatalog: route({
    method: "PATCH", path: "/sessions/{id}/catalog", summary: "Change the session's overrides, against the catalog revision read before",
    body: CatalogPatchBody, ifMatch: true,
    responses: { 200: { description: "the catalog after the change", schema: CatalogResource, etag: true } },
    problems: ["session_not_found", "precondition_required", "catalog_changed", "invalid_params"],
  }),
  stream: route({
    method: "GET", path: "/sessions/{id}/stream", summary: "The session's stream, a WebSocket: status changes, outputs and transcript rows; also accepts ?token=",
    responses: { 101: { description: "switches to a WebSocket; the client only listens", websocket: StreamMessage } },
    problems: ["session_not_found", "too_many_streams", "upgrade_required"],
  }),
  postEvent: route({
    method: "POST", path: "/sessions/{id}/events", summary: "Admit a user input (O-1, C-6): a message or a typed slash command",
    body: EventBody, bodyAfterLookup: true,
    responses: { 202: { description: "the receipt; the same id with the same body gets the same receipt again", schema: ReceiptResource } },
    problems: ["session_not_found", "command_not_found", "reload_required", "forbidden", "operation_conflict", "invalid_operation_id", "operation_expired", "operation_future", "queue_full"],
  }),
  getNetwork: route({
    method: "GET", path: "/sessions/{id}/network", summary: "What the session's kernel may reach, and its connections, oldest kept first (N-4)",
    query: NetworkQuery,
    responses: { 200: { description: "the policy in force and a page of connection records", schema: NetworkResource } },
    problems: ["session_not_found", "invalid_query"],
  }),
  patchNetwork: route({
    method: "PATCH", path: "/sessions/{id}/network", summary: "Change the session's network policy for its kernel's next connection, without a restart (N-1)",
    body: NetworkPatchBody,
    responses: { 200: { description: "the policy now; no records (GET pages them)", schema: NetworkResource } },
    problems: ["session_not_found", "invalid_params", "conflict"],
  }),
  getTranscript: route({
    method: "GET", path: "/sessions/{id}/transcript", summary: "The session's transcript rows in order; also for a session that is no longer open",
    query: TranscriptQuery,
    responses: { 200: { description: "a page of rows", schema: TranscriptPage } }, problems: ["session_not_found", "invalid_query"],
  }),
  getOperation: route({
    method: "GET", path: "/operations/{id}", summary: "An admitted input: its receipt, delivery status and turn",
    responses: { 200: { description: "the operation", schema: OperationResource } }, problems: ["operation_not_found", "operation_expired"],
  }),
  getSettings: route({
    method: "GET", path: "/settings", summary: "The global settings file, and a project's with ?workspace=",
    query: SettingsQuery,
    responses: { 200: { description: "each file with its revision", schema: SettingsDocument } }, problems: ["settings_file_invalid", "invalid_query"],
  }),
  patchSettings: route({
    method: "PATCH", path: "/settings", summary: "Change one settings file, against the revision read before (D-4)",
    body: SettingsPatchBody, ifMatch: true,
    responses: { 200: { description: "the file as written", schema: SettingsFileResource, etag: true } },
    problems: ["precondition_required", "catalog_changed", "invalid_params", "settings_path_unsafe", "settings_file_invalid", "timeout"],
  }),
  createWebLogin: route({
    method: "POST", path: "/web/logins", summary: "A one-time login link for the web console; the bearer token only, never a web login",
    access: "bearer",
    responses: { 201: { description: "the link, to open in a browser on this machine", schema: WebLoginResource } }, problems: [],
  }),
  redeemWebLogin: route({
    method: "POST", path: "/web/login", summary: "Trade a login link's code, once, for a web console login: the page secret in the body, the cookie in Set-Cookie",
    access: "login_code", body: WebLoginBody,
    responses: { 201: { description: "logged in", schema: WebPageLogin } }, problems: ["unauthorized"],
  }),
  renewWebCookie: route({
    method: "POST", path: "/web/login/cookie", summary: "Give the login of this page secret a new cookie, the old one void (another program replaced or removed it)",
    access: "page_secret",
    responses: { 204: { description: "the new cookie is in Set-Cookie" } }, problems: ["unauthorized"],
  }),
  webLogout: route({
    method: "POST", path: "/web/logout", summary: "End the web console login of this page secret, and clear its cookie",
    access: "page_secret",
    responses: { 204: { description: "logged out" } }, problems: ["unauthorized"],
  }),
} as const;

export type RouteName = keyof typeof API;
