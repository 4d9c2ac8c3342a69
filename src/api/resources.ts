/**
 * The resources the daemon answers with, each described once: the daemon's routes build them
 * (its views.ts), its clients read them, and the OpenAPI document and the web page's types are
 * generated from them. One shape per resource, every field snake_case, results as JSON values
 * (never JSON text inside a string).
 */
import { z } from "zod";
import { EXTENSION_NAMES } from "../bridge/index.js";
import type { DeepReadonly } from "../json/index.js";
import { PROBLEMS } from "./problems.js";
import { SETTINGS_SCHEMAS } from "../settings/index.js";

const Count = z.number().int().nonnegative();
const Pid = z.number().int().positive();
const Revision = z.string().describe("a SHA-256 (hex) of what the resource depends on");
const Timestamp = z.string().describe("an ISO 8601 time");
/** Any JSON value; a result stored and sent as it is. */
export const JsonValue = z.json();
const Json = JsonValue;

/** A settings document as a file holds it (D-4); the global file's schema, which every scope's file fits. */
export const SettingsValue = SETTINGS_SCHEMAS.global;

/** What a kernel can be doing; `external` is a notebook's own kernel (K-13), `none` a session whose kernel is gone. */
export const KERNEL_STATES = ["starting", "ready", "busy", "idle", "restarting", "dead", "stopped", "none", "external"] as const;

/**
 * Who opened a session, as its client said when it did (POST /sessions `client`): the terminal
 * console, `albedo chat`, the web console, a notebook's kernel, an MCP client at /mcp, or any
 * other caller of the API (the default).
 */
export const SESSION_CLIENTS = ["console", "chat", "web", "notebook", "mcp", "api"] as const;
export type SessionClient = (typeof SESSION_CLIENTS)[number];

/** What a kernel's restore brought back from its checkpoint (K-15), and what it did not, with the reason. */
export const RestoreResource = z.strictObject({
  trigger: z.enum(["crash", "restart", "resume"]).describe('why it ran: the supervisor restarted a dead kernel, the user restarted with restore, or a new session resumed a closed one'),
  at: Timestamp,
  restored: z.array(z.string()).describe("the names that came back"),
  lost: z.array(z.strictObject({ name: z.string(), reason: z.string() })).describe("the names that did not, each with why (not picklable, over a bound, failed to load)"),
  unlisted: Count.describe("names past the listing's bound, counted only"),
  error: z.string().nullable().describe("why nothing could be restored, or null"),
  summary: z.string().describe("one line: restored 14 of 15 names; lost: conn (socket)"),
});
export type RestoreResource = DeepReadonly<z.infer<typeof RestoreResource>>;

export const KernelResource = z.strictObject({
  status: z.enum(KERNEL_STATES),
  pid: Pid.nullable(),
  sandbox: z.string().describe('"bwrap" when the kernel runs in bubblewrap, else "none"'),
  sandbox_notes: z.array(z.string()).describe("paths the sandbox was asked to show but did not bind, and why"),
  warm: z.boolean().describe("whether the kernel came from the pool of spares"),
  checkpoints: z.boolean().describe("whether the kernel checkpoints its namespace after each cell (K-15)"),
  restore: RestoreResource.nullable().describe("the last restore of this session's kernel, or null"),
});
export type KernelResource = DeepReadonly<z.infer<typeof KernelResource>>;

const Enablement = z.strictObject({ enabled: z.boolean(), decided_by: z.enum(["session", "project", "global", "default"]) });

export const CommandResource = z.strictObject({
  name: z.string(),
  description: z.string(),
  arguments: z.array(z.strictObject({ name: z.string(), help: z.string(), required: z.boolean() })),
  callers: z.array(z.enum(["user", "model"])),
  submits_turn: z.boolean(),
});
export type CommandResource = DeepReadonly<z.infer<typeof CommandResource>>;

/** What each extension contributes to the session (K-8): RPC routes, commands, and for `skills` its catalog and instruction files. */
const Composition = z.strictObject({
  extensions: z.strictObject({
    python: z.strictObject({ enabled: z.literal(true), routes: z.array(z.string()), commands: Count }),
    skills: z.strictObject({
      enabled: z.boolean(),
      depends_on: z.array(z.enum(EXTENSION_NAMES)),
      skills: Count,
      instructions: z.array(z.string()),
      routes: z.array(z.string()),
      commands: Count,
    }),
    mcp: z.strictObject({
      enabled: z.boolean().describe("whether the session has MCP servers: configured when it opened, or found by a reload since"),
      depends_on: z.array(z.enum(EXTENSION_NAMES)),
      routes: z.array(z.string()),
      servers: z.array(z.strictObject({
        name: z.string(),
        origin: z.enum(["global", "project"]),
        status: z.enum(["starting", "running", "failed", "stopped", "disabled"]),
        tools: Count,
        diagnostics: z.array(z.string()),
      })).describe("each configured server with its status and what went wrong, never a secret"),
    }),
  }),
});

/** A session (D-2): the same shape in `GET /sessions`, `GET /sessions/{id}` and the `201` of `POST /sessions`. */
/** Tokens model calls used, as the endpoint reported them: a turn's, or a session's summed. */
const UsageResource = z.strictObject({
  input_tokens: Count.describe("every prompt token sent, read from a cache or not"),
  output_tokens: Count,
  cache_read_tokens: Count.describe("of input_tokens, those read from the endpoint's prompt cache"),
  cache_write_tokens: Count.describe("of input_tokens, those written to the endpoint's prompt cache"),
  model_calls: Count.describe("the model calls whose usage was reported"),
});

/** What a session's kernel may reach (N-1, N-4): in the session resource, and at the head of `GET /sessions/{id}/network`. */
export const NetworkSummary = z.strictObject({
  mode: z.enum(["off", "policy", "open", "unenforced"]).describe('"unenforced": the kernel runs unsandboxed or remotely, with whatever network its host has'),
  text: z.string().describe("one line: off, a policy of N hosts, or open and unsafe"),
  hosts: Count.describe("host patterns the policy allows (allow entries and presets' patterns)"),
  from: z.enum(["global", "session"]).describe("whose setting decides: the global one the session opened with, or the session's own since it was changed"),
  setting: z.union([z.boolean(), z.record(z.string(), z.unknown())]).describe("the `network` value in force"),
  connections: z.strictObject({ allowed: Count, denied: Count, failed: Count, bytes: Count, dropped: Count.describe("records no longer listed (past the session's bound)") }),
  diagnostics: z.array(z.string()).describe("what the session ignores, e.g. a project file that sets network"),
});
export type NetworkSummary = DeepReadonly<z.infer<typeof NetworkSummary>>;

export const SessionResource = z.strictObject({
  id: z.string(),
  workspace: z.string(),
  status: z.literal("open"),
  client: z.enum(SESSION_CLIENTS).describe('who opened it, as POST /sessions said ("api" when it did not)'),
  opened_at: Timestamp.describe("when the daemon handed the session to its client"),
  kernel: KernelResource,
  revision: Revision.describe("the catalog snapshot the session serves"),
  discovered_revision: Revision.describe("everything discovered, enabled or not"),
  needs_reload: z.boolean(),
  selection: z.strictObject({
    settings_revision: z.string(),
    scopes: z.strictObject({ global: SettingsValue.optional(), project: SettingsValue.optional(), session: SettingsValue.optional() }),
    effective: z.record(z.string(), Enablement),
  }),
  composition: Composition,
  commands: z.array(CommandResource),
  usage: UsageResource.nullable().describe("the tokens this session's turns used so far, summed; null until an endpoint reported any"),
  network: NetworkSummary,
});
export type SessionResource = DeepReadonly<z.infer<typeof SessionResource>>;


/** One connection or request of the kernel, as the proxy recorded it as it ended (N-4); never a header. */
export const NetworkRecordResource = z.strictObject({
  seq: Count.describe("its place in the session's list, from 1"),
  at: Count.describe("when it arrived, ms since the epoch"),
  host: z.string(),
  port: Count,
  method: z.string().nullable(),
  path: z.string().nullable(),
  decision: z.enum(["allowed", "denied", "failed"]),
  rule: z.string().nullable().describe("the setting that allowed it"),
  reason: z.string().nullable().describe("why it was refused, or what failed"),
  intercepted: z.boolean().describe("whether the proxy spoke TLS itself to add secret headers"),
  bytes_up: Count,
  bytes_down: Count,
  duration_ms: Count,
});

export const NetworkResource = z.strictObject({
  session_id: z.string(),
  network: NetworkSummary,
  records: z.array(NetworkRecordResource),
  next_after: Count.nullable().describe("pass as `after` for the next page; null when this page reached the newest"),
});
export type NetworkResource = DeepReadonly<z.infer<typeof NetworkResource>>;

/** The kernel bridge record a notebook's kernel needs (K-13); see docs/rpc.md. */
export const BridgeResource = z.strictObject({
  endpoint: z.string(),
  token: z.string(),
  deadline_ms: Count,
  max_message_bytes: Count,
  extensions: z.array(z.enum(EXTENSION_NAMES)),
});
export type BridgeResource = DeepReadonly<z.infer<typeof BridgeResource>>;

const ChannelAddress = z.string().describe("a ZeroMQ address, ipc://PATH");

/** Where a notebook's launcher relays Jupyter's channels to (K-14): the session kernel's own sockets. */
export const RelayResource = z.strictObject({
  shell: ChannelAddress,
  iopub: ChannelAddress,
  stdin: ChannelAddress,
  control: ChannelAddress,
  hb: ChannelAddress,
  kernel_pid: Count.describe("the kernel's process (in a sandbox, the sandbox's): the relay ends when it does"),
});
export type RelayResource = DeepReadonly<z.infer<typeof RelayResource>>;

/** The `201` of `POST /sessions`: the session, plus `rpc` only for a session whose kernel is external, `relay` only for one opened for a relay. */
export const CreatedSession = SessionResource.extend({ rpc: BridgeResource.optional(), relay: RelayResource.optional() });
export type CreatedSession = DeepReadonly<z.infer<typeof CreatedSession>>;

/** A closed session whose checkpoint `POST /sessions` with `resume` starts from (K-15). */
export const ResumableSession = z.strictObject({
  id: z.string().describe("the closed session's id, for `resume`"),
  workspace: z.string().describe("the workspace it ran on; a resume opens there"),
  closed_at: Timestamp.nullable().describe("when it was closed; null when the process that ran it died without closing it"),
  checkpointed_at: Timestamp.describe("when its kernel last wrote the checkpoint"),
});

export const SessionList = z.strictObject({
  sessions: z.array(SessionResource),
  resumable: z.array(ResumableSession).optional().describe("with `closed=resumable`: the closed sessions that can be resumed, most recently checkpointed first"),
});
export type ResumableSessionResource = DeepReadonly<z.infer<typeof ResumableSession>>;
export type SessionList = DeepReadonly<z.infer<typeof SessionList>>;

/** One kernel output (stream, display_data, execute_result, error, ...) with its Jupyter content; tracebacks carry no terminal escapes. */
export const OutputResource = z.strictObject({ msg_type: z.string(), content: z.record(z.string(), Json) });
export type OutputResource = DeepReadonly<z.infer<typeof OutputResource>>;

/** An image an execution showed, kept for people; its bytes at `url`. */
export const ImageResource = z.strictObject({
  id: z.string().describe("the SHA-256 of the bytes, 64 lower-case hex digits"),
  mime: z.enum(["image/png", "image/jpeg", "image/gif", "image/webp"]),
  width: Count,
  height: Count,
  bytes: Count,
  url: z.string().describe("GET it, with the token, for the bytes: /sessions/{id}/images/{image_id}"),
});

export const ExecuteAnswer = z.strictObject({
  execution_id: z.string(),
  status: z.enum(["ok", "error", "aborted"]),
  execution_count: Count.nullable(),
  outputs: z.array(OutputResource),
  images: z.array(ImageResource).describe("the images the execution showed, checked, scaled and kept, in output order (at most MAX_IMAGES_PER_EXECUTION)"),
  image_notes: z.array(z.string()).describe("one line per image shown but not kept: bad bytes, a bomb, an SVG, past the per-execution bound or the session's quota"),
  dropped_outputs: Count,
  dropped_output_bytes: Count,
  pages: z.array(z.string()).describe("text the kernel paged instead of printing it (IPython's `obj?` help)"),
});
export type ExecuteAnswer = DeepReadonly<z.infer<typeof ExecuteAnswer>>;

const ServerNames = z.array(z.string());

export const ReloadAnswer = z.strictObject({
  revision: Revision,
  previous_revision: Revision,
  added: z.array(z.string()).describe("skills the reload added"),
  removed: z.array(z.string()).describe("skills the reload removed"),
  failed: z
    .array(z.strictObject({ name: z.string().describe("the skill's folder"), message: z.string().describe("the first error in its SKILL.md") }))
    .describe("skills the reload found that did not load (one broken before the reload is not repeated)"),
  skills: Count,
  mcp: z
    .strictObject({
      added: ServerNames,
      removed: ServerNames,
      restarted: ServerNames.describe("their entry changed"),
      started: ServerNames.describe("configured before but not running (awaiting approval, disabled), now started"),
      stopped: ServerNames.describe("still configured, no longer running (disabled, or a changed project entry awaiting approval)"),
    })
    .describe("what the reload did to the session's MCP servers; the first servers of a session opened without any start here too"),
});
export type ReloadAnswer = DeepReadonly<z.infer<typeof ReloadAnswer>>;

export const RestartAnswer = z.strictObject({ restore: RestoreResource.nullable().describe("what the restore brought back; null for a restart without restore") });
export type RestartAnswer = DeepReadonly<z.infer<typeof RestartAnswer>>;

const Diagnostic = z.strictObject({ severity: z.enum(["error", "warning"]), code: z.string(), path: z.string(), message: z.string() });
const Preference = z.enum(["on", "off"]).nullable();

/** The management catalog (D-3): every candidate, valid or not, with its preferences per scope. */
export const CatalogResource = z.strictObject({
  revision: Revision,
  needs_reload: z.boolean(),
  skills: z.array(
    z.strictObject({
      id: z.string(),
      name: z.string(),
      preference_key: z.string().nullable(),
      description: z.string().nullable(),
      command: z.string().nullable(),
      source: z.string(),
      resolved_source: z.string().nullable(),
      scope: z.string(),
      status: z.enum(["valid", "invalid", "shadowed"]),
      diagnostics: z.array(Diagnostic),
      global_preference: Preference,
      project_preference: Preference,
      session_override: Preference,
      effective: z.strictObject({ enabled: z.boolean(), decided_by: z.enum(["session", "project", "global", "default", "invalid", "shadowed", "extension"]) }),
      shadowed_by: z.string().nullable(),
    }),
  ),
  instructions: z.array(
    z.strictObject({ scope: z.string(), path: z.string(), resolved_path: z.string(), size: Count, truncated: z.boolean(), sha256: z.string(), enabled: z.boolean() }),
  ),
  diagnostics: z.array(Diagnostic),
});
export type CatalogResource = DeepReadonly<z.infer<typeof CatalogResource>>;

/** One settings file: its scope, path, revision (the entity tag for If-Match) and content as the file holds it. */
export const SettingsFileResource = z.strictObject({
  scope: z.enum(["global", "project"]),
  file: z.string(),
  revision: z.string().describe('SHA-256 of the file\'s bytes, or "absent"'),
  settings: SettingsValue,
});
export type SettingsFileResource = DeepReadonly<z.infer<typeof SettingsFileResource>>;

export const SettingsDocument = z.strictObject({ global: SettingsFileResource, project: SettingsFileResource.optional() });
export type SettingsDocument = DeepReadonly<z.infer<typeof SettingsDocument>>;

/** The record of one admitted input (O-1): the `202` of the events route and `receipt` of the operation. */
export const ReceiptResource = z.strictObject({
  operation_id: z.string(),
  session_id: z.string(),
  turn_id: z.string(),
  type: z.enum(["message", "command"]),
  admitted_at: Timestamp,
});
export type ReceiptResource = DeepReadonly<z.infer<typeof ReceiptResource>>;

export const TurnOutcomeResource = z.discriminatedUnion("state", [
  z.strictObject({
    state: z.literal("committed"),
    result: z.enum(["completed", "failed", "interrupted"]).describe("how the turn ended; a built-in run after admission is completed"),
    reply: Json.describe("the model's prose answer, or a built-in command's result, as a JSON value"),
    error: z.string().nullable().describe("why a failed turn failed"),
    usage: UsageResource.nullable().describe("the tokens the turn's model calls used; null when the endpoint reported none, or for a built-in"),
  }),
  z.strictObject({ state: z.literal("cancelled"), reason: z.string().nullable() }),
  z.strictObject({ state: z.literal("abandoned"), reason: z.string() }),
]);

/** The one turn an admitted input yields: in `GET /operations/{id}` and in the stream's transcript events. */
export const TurnResource = z.strictObject({
  turn_id: z.string(),
  operation_id: z.string(),
  session_id: z.string(),
  visible_text: z.string().describe("what the transcript shows: the message, or the slash text as typed"),
  model_input: z.string().describe("the text the model is given: the message, or the activation block of a skill"),
  state: z.enum(["pending", "running", "committed", "cancelled", "abandoned"]),
  outcome: TurnOutcomeResource.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type TurnResource = DeepReadonly<z.infer<typeof TurnResource>>;

export const OperationResource = z.strictObject({
  operation_id: z.string(),
  delivery: z.enum(["pending", "committed", "cancelled"]),
  receipt: ReceiptResource,
  turn: TurnResource,
});
export type OperationResource = DeepReadonly<z.infer<typeof OperationResource>>;

export const HealthResource = z.strictObject({
  ok: z.literal(true),
  pid: Pid,
  started_at: Timestamp.describe("when the daemon process started"),
  sessions: Count.describe("sessions open"),
  spares: z.array(z.strictObject({ workspace: z.string(), skills: z.boolean(), state: z.enum(["booting", "ready"]), pid: Pid.nullable() })),
  log: z.strictObject({ file: z.string().nullable(), dropped_writes: Count, last_error: z.string().nullable(), suppressed_entries: Count }).nullable(),
});
export type HealthResource = DeepReadonly<z.infer<typeof HealthResource>>;

/** A one-time login link for the web console (W-2), as `albedo web` opens it. */
export const WebLoginResource = z.strictObject({
  path: z.string().describe("the link's path on this daemon, its code in the fragment: `/login#code=…`, usable once"),
  expires_at: Timestamp.describe("when the link stops working"),
});
export type WebLoginResource = DeepReadonly<z.infer<typeof WebLoginResource>>;

/** A web console login as the page gets it when it trades a code (the cookie comes in Set-Cookie). */
export const WebPageLogin = z.strictObject({
  page_secret: z.string().describe("the page keeps it in its origin's sessionStorage and sends it as X-Albedo-Page on every request (the stream: as the subprotocol albedo.page.SECRET)"),
});
export type WebPageLogin = DeepReadonly<z.infer<typeof WebPageLogin>>;

const PullVia = z.enum(["tool", "python", "user"]);
const RowPlace = { turn_id: z.string(), seq: Count.describe("the row's place in the session's transcript, from 1"), at: Count.describe("when it was written, in ms since the epoch") };

/** One transcript row (O-9), as stored and streamed. */
export const TranscriptRowResource = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("user"), text: z.string(), ...RowPlace }),
  z.strictObject({ kind: z.literal("assistant"), text: z.string(), ...RowPlace }),
  z.strictObject({ kind: z.literal("code"), code: z.string(), ...RowPlace }),
  z.strictObject({
    kind: z.literal("output"), text: z.string(), status: z.enum(["ok", "error"]), truncated: z.boolean(),
    images: z.array(ImageResource).optional().describe("the cell's images kept for people, in output order; absent when it showed none"), ...RowPlace,
  }),
  z.strictObject({ kind: z.literal("skill"), skill: z.string(), bytes: Count, via: PullVia, already_loaded: z.boolean(), text: z.string(), ...RowPlace }),
  z.strictObject({
    kind: z.literal("mcp"), server: z.string(), tool: z.string(), via: z.enum(["python", "tool"]), ms: Count, bytes: Count.describe("the result's size"),
    is_error: z.boolean(), text: z.string(), ...RowPlace,
  }).describe("an MCP tool call made by the model's code (via python) or as a function tool (via tool)"),
  z.strictObject({
    kind: z.literal("network"), host: z.string(), decision: z.enum(["allowed", "denied", "failed"]), connections: Count, bytes: Count.describe("both ways, summed"),
    rule: z.string().nullable().describe("the setting that allowed it"), reason: z.string().nullable().describe("why it was refused, or what failed"), text: z.string(), ...RowPlace,
  }).describe("one host a python step reached through the egress proxy, per decision: its connections summed"),
  z.strictObject({ kind: z.literal("notice"), text: z.string(), ...RowPlace }),
  z.strictObject({ kind: z.literal("error"), text: z.string(), ...RowPlace }),
]);
export type TranscriptRowResource = DeepReadonly<z.infer<typeof TranscriptRowResource>>;

export const TranscriptPage = z.strictObject({
  session_id: z.string(),
  rows: z.array(TranscriptRowResource),
  next_after: Count.nullable().describe("pass as `after` for the next page; null when this page reached the end"),
});
export type TranscriptPage = DeepReadonly<z.infer<typeof TranscriptPage>>;

/** One message on a session's stream (`GET /sessions/{id}/stream`, a WebSocket). */
export const StreamMessage = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("status"), session_id: z.string(), kernel: KernelResource, reason: z.string().nullable(), revision: Revision }),
  z.strictObject({ type: z.literal("output"), session_id: z.string(), execution_id: z.string(), msg_type: z.string(), content: z.record(z.string(), Json) }),
  z.strictObject({ type: z.literal("transcript"), session_id: z.string(), turn: TurnResource }),
  z.strictObject({ type: z.literal("row"), session_id: z.string(), row: TranscriptRowResource }),
  z.strictObject({ type: z.literal("text"), session_id: z.string(), turn_id: z.string(), delta: z.string().describe("the model's prose as it streams") }),
  z.strictObject({
    type: z.literal("network"), session_id: z.string(), host: z.string().describe('"" on the line that sums the hosts past the bound of one window'), port: Count,
    reason: z.string(), hint: z.string().describe("how to allow it"), count: Count.describe("the denials this line stands for: 1 as one happens, N for its repeats in a window"),
    text: z.string().describe("the line as a terminal prints it"),
  }).describe("a connection the session's egress proxy refused, as it happens (its repeats within a window are counted into one later line)"),
]);
export type StreamMessage = DeepReadonly<z.infer<typeof StreamMessage>>;

/** An OpenAPI 3.1 document (GET /openapi.json). */
export const OpenApiDocumentResource = z.record(z.string(), JsonValue);
export type OpenApiDocumentResource = DeepReadonly<z.infer<typeof OpenApiDocumentResource>>;

/** An error answer (RFC 9457): `code` is stable, `detail` is for people; some problems add fields. */
export const ProblemDocument = z.looseObject({
  type: z.string(),
  title: z.string(),
  status: z.number().int().min(400).max(599),
  detail: z.string(),
  code: z.enum(Object.keys(PROBLEMS) as [keyof typeof PROBLEMS, ...(keyof typeof PROBLEMS)[]]),
  field: z.string().optional().describe("the body or query field at fault, e.g. skills.on[2]"),
  problems: z.array(z.strictObject({ path: z.string(), message: z.string() })).optional(),
});
export type ProblemDocument = DeepReadonly<z.infer<typeof ProblemDocument>>;
