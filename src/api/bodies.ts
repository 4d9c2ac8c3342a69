/**
 * The request bodies (and query strings) the routes take, each described once. A route parses its
 * body with its schema before it acts (unknown fields refused, every problem named by its path) and
 * trusts the type from then on. Checks that need the disk or the database stay with the route or
 * the store.
 */
import { isAbsolute } from "node:path";
import { z } from "zod";
import { remoteSettingsProblems } from "../kernel/index.js";
import { MAX_INPUT_NAME_LENGTH, MAX_INPUT_TEXT_BYTES } from "../operations/index.js";
import { MAX_RECORDS_PAGE as MAX_NETWORK_PAGE_RECORDS } from "../network/index.js";
import { REPLACED_SECTIONS, SkillName } from "../settings/index.js";
import {
  MAX_EXECUTION_ID_LENGTH, MAX_NETWORK_EDIT_PATTERNS, MAX_PATH_LENGTH, MAX_RELAY_KEY_LENGTH, MAX_TRANSCRIPT_PAGE_ROWS,
} from "./limits.js";
import { SESSION_CLIENTS } from "./resources.js";

const AbsolutePath = z
  .string()
  .max(MAX_PATH_LENGTH)
  .refine((path) => isAbsolute(path) && !path.includes("\0"), "must be an absolute path");

/** A body of a route that takes none: empty, or `{}`. */
export const NoBody = z.strictObject({}).optional();

/** `remote` of POST /sessions: the per-session override; its rules are the remote kernel domain's. */
const RemoteBody = z
  .strictObject({
    url: z.string().describe("the server's base URL (http or https)"),
    kernel_name: z.string().optional(),
    username: z.string().optional().describe("sent as KERNEL_USERNAME"),
    env: z.record(z.string(), z.string()).optional().describe("KERNEL_* variables for the server"),
  })
  .superRefine((value, ctx) => {
    for (const [path, message] of remoteSettingsProblems(value, "remote")) {
      ctx.addIssue({ code: "custom", path: path.split(".").slice(1), message });
    }
  });

/** `relay` of POST /sessions: what a notebook's launcher gives so the session's kernel signs as the notebook expects (K-14). */
const RelayBody = z.strictObject({
  // Printable ASCII: it goes into the kernel's connection file as it is, and Jupyter writes a UUID.
  key: z.string().min(1).max(MAX_RELAY_KEY_LENGTH).regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces").describe("the HMAC key of the notebook's connection file"),
  signature_scheme: z.literal("hmac-sha256").describe("the only scheme Jupyter uses"),
  launcher_pid: z.number().int().positive().describe("the launcher's pid: the session (and its kernel) closes when that process is gone"),
  cwd: AbsolutePath.optional().describe("the kernel's working directory: the notebook's directory, inside the workspace (default the workspace)"),
});

export const OpenSessionBody = z
  .strictObject({
    workspace: AbsolutePath.describe("an existing directory"),
    extensions: z.strictObject({ skills: z.boolean().optional() }).optional(),
    kernel: z.enum(["own", "external", "relay"]).optional().describe('"external": a notebook\'s running kernel joins the session (K-13); "relay": the session\'s own kernel, signing with a notebook\'s key, for its launcher to relay to (K-14)'),
    kernel_pid: z.number().int().positive().optional().describe('the pid of that kernel; only with "kernel": "external"'),
    relay: RelayBody.optional().describe('only with "kernel": "relay"'),
    remote: RemoteBody.optional().describe("run this session's kernel on that Jupyter Server (K-12), over the global kernel.remote settings"),
    client: z.enum(SESSION_CLIENTS).optional().describe('who opens it, for the lists that show sessions (`albedo sessions`, the web console); "api" when absent'),
    resume: z.string().regex(/^[0-9a-f]{1,64}$/, "must be a session id").optional().describe("start from the checkpoint of this closed session (K-15): its names are loaded before the first cell; the workspace must be the one it ran on"),
    network: REPLACED_SECTIONS.network.optional().describe(
      "this session's own network policy in place of the global setting (a policy object, or false); true only while the global network setting is true. Its kernel is booted for it, not taken from the warm pool",
    ),
  })
  .superRefine((body, ctx) => {
    const external = body.kernel === "external";
    const relayed = body.kernel === "relay";
    if ((external || relayed) && body.remote !== undefined) ctx.addIssue({ code: "custom", path: ["remote"], message: `"remote" cannot go with "kernel": "${body.kernel}"` });
    if (external && body.kernel_pid === undefined) ctx.addIssue({ code: "custom", path: ["kernel_pid"], message: 'an external kernel needs "kernel_pid", the pid of its process' });
    if (!external && body.kernel_pid !== undefined) ctx.addIssue({ code: "custom", path: ["kernel_pid"], message: '"kernel_pid" goes with "kernel": "external"' });
    if (relayed && body.relay === undefined) ctx.addIssue({ code: "custom", path: ["relay"], message: 'a relayed kernel needs "relay": the notebook\'s key, signature_scheme and launcher_pid' });
    if (!relayed && body.relay !== undefined) ctx.addIssue({ code: "custom", path: ["relay"], message: '"relay" goes with "kernel": "relay"' });
    if (body.network !== undefined && (external || body.remote !== undefined)) ctx.addIssue({ code: "custom", path: ["network"], message: '"network" goes with a kernel albedo sandboxes on this machine, not an external or remote one' });
    if (body.resume !== undefined && (external || relayed || body.remote !== undefined)) ctx.addIssue({ code: "custom", path: ["resume"], message: '"resume" goes with the session\'s own local kernel' });
  });
export type OpenSessionBody = z.infer<typeof OpenSessionBody>;

export const RestartBody = z.strictObject({
  restore: z.boolean().optional().describe("load the checkpoint before the first cell (K-15); default false: the kernel starts empty"),
});
export type RestartBody = z.infer<typeof RestartBody>;

export const ExecuteBody = z.strictObject({
  code: z.string(),
  execution_id: z.string().min(1).max(MAX_EXECUTION_ID_LENGTH).optional().describe("tags this execution's outputs on the stream; one is made when absent"),
});
export type ExecuteBody = z.infer<typeof ExecuteBody>;

const SkillNames = z.array(SkillName);

/** Session overrides (the session scope of D-4): names to turn on, off, or stop naming. */
export const CatalogPatchBody = z.strictObject({ on: SkillNames.optional(), off: SkillNames.optional(), clear: SkillNames.optional() });
export type CatalogPatchBody = z.infer<typeof CatalogPatchBody>;

/** A sections a write replaces whole, or null to remove it. */
const replaced = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

export const SettingsPatchBody = z
  .strictObject({
    scope: z.enum(["global", "project"]),
    workspace: AbsolutePath.optional().describe("the project's directory; only with the project scope"),
    skills: z
      .strictObject({
        on: SkillNames.optional(),
        off: SkillNames.optional(),
        clear: SkillNames.optional(),
        default: z.enum(["on", "off"]).nullable().optional().describe("global scope only; null removes it"),
      })
      .optional(),
    sandbox: replaced(REPLACED_SECTIONS.sandbox),
    network: replaced(REPLACED_SECTIONS.network),
    kernel: replaced(REPLACED_SECTIONS.kernel),
    daemon: replaced(REPLACED_SECTIONS.daemon),
    limits: replaced(REPLACED_SECTIONS.limits),
    model: replaced(REPLACED_SECTIONS.model),
    mcp: replaced(REPLACED_SECTIONS.mcp),
  })
  .superRefine((body, ctx) => {
    if (body.scope === "project" && body.workspace === undefined) ctx.addIssue({ code: "custom", path: ["workspace"], message: "a project scope needs workspace" });
    if (body.scope === "global" && body.workspace !== undefined) ctx.addIssue({ code: "custom", path: ["workspace"], message: "the global scope takes no workspace" });
    if (body.scope !== "global" && body.skills?.default !== undefined) {
      ctx.addIssue({ code: "custom", path: ["skills", "default"], message: "skills.default exists only in the global scope" });
    }
  });
export type SettingsPatchBody = z.infer<typeof SettingsPatchBody>;

/** Settings sections `PATCH /settings` replaces whole. */
export const REPLACED_SETTINGS = ["sandbox", "network", "kernel", "daemon", "limits", "model", "mcp"] as const satisfies readonly (keyof typeof REPLACED_SECTIONS & keyof SettingsPatchBody)[];

export const SettingsQuery = z.strictObject({ workspace: AbsolutePath.optional().describe("also read this workspace's project settings") });

/** `PATCH /sessions/{id}/network`: patterns to allow or deny from the next connection on, or `reset` to the setting the session opened with. */
export const NetworkPatchBody = z
  .strictObject({
    allow: z.array(z.string().max(MAX_PATH_LENGTH)).max(MAX_NETWORK_EDIT_PATTERNS).optional().describe("PATTERNs added to network.allow (and dropped from deny)"),
    deny: z.array(z.string().max(MAX_PATH_LENGTH)).max(MAX_NETWORK_EDIT_PATTERNS).optional().describe("PATTERNs added to network.deny (and dropped from allow)"),
    reset: z.boolean().optional().describe("back to the setting the session opened with (its own from POST /sessions, else the global one), before allow and deny apply"),
  })
  .describe("a change of the session's network policy; it applies to the kernel's next connection, without a restart");
export type NetworkPatchBody = z.infer<typeof NetworkPatchBody>;

export const NetworkQuery = z.strictObject({
  after: z.coerce.number().int().min(0).optional().describe("only records after this seq (default 0: the oldest kept)"),
  limit: z.coerce.number().int().min(1).max(MAX_NETWORK_PAGE_RECORDS).optional().describe(`records at most (default and most ${MAX_NETWORK_PAGE_RECORDS})`),
});

/** `GET /sessions`: the open sessions, and with `closed=resumable` the closed ones a resume starts from. */
export const SessionListQuery = z.strictObject({
  closed: z.enum(["resumable"]).optional().describe("`resumable` also lists the closed sessions whose checkpoint can be resumed"),
});

export const TranscriptQuery = z.strictObject({
  after: z.coerce.number().int().min(0).optional().describe("only rows after this seq (default 0: from the start)"),
  limit: z.coerce.number().int().min(1).max(MAX_TRANSCRIPT_PAGE_ROWS).optional().describe(`rows at most (default and most ${MAX_TRANSCRIPT_PAGE_ROWS})`),
});

const OperationId = z.string().min(1).max(MAX_INPUT_NAME_LENGTH).describe("a UUIDv7 the client chose, so that a retry is safe; when absent the daemon mints one");

const InputText = z.string().refine((text) => Buffer.byteLength(text) <= MAX_INPUT_TEXT_BYTES, {
  error: (issue) => `is ${Buffer.byteLength(String(issue.input))} bytes; at most ${MAX_INPUT_TEXT_BYTES} (MAX_INPUT_TEXT_BYTES)`,
});

/** A user input (O-1): a message, or a slash command typed by a person (C-6). */
export const EventBody = z.discriminatedUnion("type", [
  z.strictObject({
    operation_id: OperationId.optional(),
    type: z.literal("message"),
    text: InputText.refine((text) => text.trim().length > 0, "must not be empty"),
  }),
  z.strictObject({
    operation_id: OperationId.optional(),
    type: z.literal("command"),
    command: z
      .string()
      .max(MAX_INPUT_NAME_LENGTH)
      .regex(/^\s*\/\S+\s*$/, 'must be a slash name such as "/demo"'),
    arguments: InputText.default("").describe("the raw argument text, as typed after the name (default: none)"),
  }),
]);
export type EventBody = z.infer<typeof EventBody>;

/** POST /web/login: the one-time code from the login link's fragment. */
export const WebLoginBody = z.strictObject({ code: z.string().max(128).describe("the code after `#code=` in the link `albedo web` opened") });
