/**
 * The api domain: the daemon's HTTP contract, written once. Route declarations, request bodies,
 * resources and problems (zod); the OpenAPI document and the web page's TypeScript module, both
 * generated from them; the files that say where a daemon runs; and the typed client the CLI uses.
 * The daemon binds its routes to these declarations; nothing here knows the server.
 */
export { API } from "./routes.js";
export type { RouteAccess, RouteSpec } from "./routeSpec.js";
export { NoBody, REPLACED_SETTINGS, SettingsPatchBody, type EventBody } from "./bodies.js";
export type {
  BridgeResource, CatalogResource, CreatedSession, ExecuteAnswer, HealthResource, KernelResource, NetworkResource, NetworkSummary, OperationResource, OutputResource, ProblemDocument,
  ReceiptResource, ReloadAnswer, ResumableSessionResource, SessionClient, SessionResource, SettingsDocument, SettingsFileResource, StreamMessage, TranscriptPage, TranscriptRowResource, TurnResource,
} from "./resources.js";
export { PROBLEM_CONTENT_TYPE, PROBLEM_TYPE_PREFIX, PROBLEMS, type ProblemCode } from "./problems.js";
export { openApiDocument, OPENAPI_COMMAND, OPENAPI_FILE } from "./openapi.js";
export { WEB_COOKIE_LOST, WEB_LOGIN_PATH, WEB_PAGE_HEADER, WEB_PAGE_PROTOCOL_PREFIX, WEB_STREAM_PROTOCOL } from "./webProtocol.js";
export { DAEMON_INFO_FILE, DAEMON_TOKEN_FILE, ON_DEMAND_LOG_FILE, readDaemonInfo, type DaemonInfo } from "./daemonFiles.js";
export { DAEMON_START_TIMEOUT_MS, MAX_PATH_LENGTH, MAX_REQUEST_BODY_BYTES, MAX_TRANSCRIPT_PAGE_ROWS } from "./limits.js";
export { DaemonClient, DaemonError, findRunningDaemon } from "./client.js";
export { RemoteSession } from "./remoteSession.js";
