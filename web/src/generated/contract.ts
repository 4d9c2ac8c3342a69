// Generated from the daemon's HTTP contract by `npm run openapi` (src/api/pageContract.ts); do not edit.
// The web page's copy of the contract, in plain TypeScript: the page imports nothing of the runtime.

// The login protocol's names (src/api/webProtocol.ts) and the transcript's page bound (src/api/limits.ts).
export const WEB_PAGE_HEADER = "x-albedo-page";
export const WEB_STREAM_PROTOCOL = "albedo.stream";
export const WEB_PAGE_PROTOCOL_PREFIX = "albedo.page.";
export const WEB_LOGIN_PATH = "/login";
export const WEB_COOKIE_LOST = "web_cookie_lost";
export const MAX_TRANSCRIPT_PAGE_ROWS = 1000;

/** Every route of the daemon by name: its method, and its path with `{name}` for each parameter. */
export const ROUTES = {
  health: { method: "GET", path: "/health" },
  openapi: { method: "GET", path: "/openapi.json" },
  openSession: { method: "POST", path: "/sessions" },
  listSessions: { method: "GET", path: "/sessions" },
  getSession: { method: "GET", path: "/sessions/{id}" },
  closeSession: { method: "DELETE", path: "/sessions/{id}" },
  execute: { method: "POST", path: "/sessions/{id}/execute" },
  getImage: { method: "GET", path: "/sessions/{id}/images/{image_id}" },
  interrupt: { method: "POST", path: "/sessions/{id}/interrupt" },
  restart: { method: "POST", path: "/sessions/{id}/restart" },
  reload: { method: "POST", path: "/sessions/{id}/reload" },
  getCatalog: { method: "GET", path: "/sessions/{id}/catalog" },
  patchCatalog: { method: "PATCH", path: "/sessions/{id}/catalog" },
  stream: { method: "GET", path: "/sessions/{id}/stream" },
  postEvent: { method: "POST", path: "/sessions/{id}/events" },
  getNetwork: { method: "GET", path: "/sessions/{id}/network" },
  patchNetwork: { method: "PATCH", path: "/sessions/{id}/network" },
  getTranscript: { method: "GET", path: "/sessions/{id}/transcript" },
  getOperation: { method: "GET", path: "/operations/{id}" },
  getSettings: { method: "GET", path: "/settings" },
  patchSettings: { method: "PATCH", path: "/settings" },
  createWebLogin: { method: "POST", path: "/web/logins" },
  redeemWebLogin: { method: "POST", path: "/web/login" },
  renewWebCookie: { method: "POST", path: "/web/login/cookie" },
  webLogout: { method: "POST", path: "/web/logout" },
} as const;

/**
 * What each route takes (`params`, `query`, `body`, and `ifMatch` when it needs If-Match) and what
 * it answers: JSON as `answer` (undefined: no body), bytes of the media type `bytes`, or on a
 * WebSocket, each `message`.
 */
export interface RouteTypes {
  /** Whether the daemon answers, with its sessions, spares and log counts */
  readonly health: {
    readonly answer: Health;
  };
  /** This API as an OpenAPI 3.1 document */
  readonly openapi: {
    readonly answer: OpenApiDocument;
  };
  /** Open a session on a workspace (D-2); with an external kernel, a notebook's kernel joins it (K-13) */
  readonly openSession: {
    readonly body: OpenSessionBody;
    readonly answer: CreatedSession;
  };
  /** Every open session, and with closed=resumable the closed sessions a resume can start from (K-15) */
  readonly listSessions: {
    readonly query: {
      /** `resumable` also lists the closed sessions whose checkpoint can be resumed */
      readonly closed?: "resumable";
    };
    readonly answer: SessionList;
  };
  /** The session resource; rereads the settings files, walks skill files only when they changed (D-2) */
  readonly getSession: {
    readonly params: { readonly id: string };
    readonly answer: Session;
  };
  /** Close the session: its streams end, its kernel shuts down */
  readonly closeSession: {
    readonly params: { readonly id: string };
    readonly answer: undefined;
  };
  /** Run code in the session's kernel and answer when it ends; outputs also go to the stream */
  readonly execute: {
    readonly params: { readonly id: string };
    readonly body: ExecuteBody;
    readonly answer: ExecuteAnswer;
  };
  /** The bytes of an image this session kept (an execute answer's or an output row's image id) */
  readonly getImage: {
    readonly params: { readonly id: string; readonly image_id: string };
    readonly bytes: "image/*";
  };
  /** End the running turn as interrupted, or interrupt the running cell; its pending RPC calls are cancelled */
  readonly interrupt: {
    readonly params: { readonly id: string };
    readonly answer: undefined;
  };
  /** Restart the session's kernel: empty, or with restore loading its checkpoint before the first cell (K-15) */
  readonly restart: {
    readonly params: { readonly id: string };
    readonly body: {
      /** load the checkpoint before the first cell (K-15); default false: the kernel starts empty */
      readonly restore?: boolean;
    };
    readonly answer: {
      /** what the restore brought back; null for a restart without restore */
      readonly restore:
        | {
            /** why it ran: the supervisor restarted a dead kernel, the user restarted with restore, or a new session resumed a closed one */
            readonly trigger: "crash" | "restart" | "resume";
            /** an ISO 8601 time */
            readonly at: string;
            /** the names that came back */
            readonly restored: readonly string[];
            /** the names that did not, each with why (not picklable, over a bound, failed to load) */
            readonly lost: readonly {
              readonly name: string;
              readonly reason: string;
            }[];
            /** names past the listing's bound, counted only */
            readonly unlisted: number;
            /** why nothing could be restored, or null */
            readonly error: string | null;
            /** one line: restored 14 of 15 names; lost: conn (socket) */
            readonly summary: string;
          }
        | null;
    };
  };
  /** Rediscover skills and swap catalog and routes; the kernel keeps its state (K-7) */
  readonly reload: {
    readonly params: { readonly id: string };
    readonly answer: ReloadAnswer;
  };
  /** The management catalog (D-3): every candidate with its preferences; never reloads */
  readonly getCatalog: {
    readonly params: { readonly id: string };
    readonly answer: Catalog;
  };
  /** Change the session's overrides, against the catalog revision read before */
  readonly patchCatalog: {
    readonly params: { readonly id: string };
    readonly body: CatalogPatchBody;
    readonly ifMatch: true;
    readonly answer: Catalog;
  };
  /** The session's stream, a WebSocket: status changes, outputs and transcript rows; also accepts ?token= */
  readonly stream: {
    readonly params: { readonly id: string };
    readonly message: StreamMessage;
  };
  /** Admit a user input (O-1, C-6): a message or a typed slash command */
  readonly postEvent: {
    readonly params: { readonly id: string };
    readonly body: EventBody;
    readonly answer: Receipt;
  };
  /** What the session's kernel may reach, and its connections, oldest kept first (N-4) */
  readonly getNetwork: {
    readonly params: { readonly id: string };
    readonly query: {
      /** only records after this seq (default 0: the oldest kept) */
      readonly after?: number;
      /** records at most (default and most 200) */
      readonly limit?: number;
    };
    readonly answer: {
      readonly session_id: string;
      readonly network: {
        /** "unenforced": the kernel runs unsandboxed or remotely, with whatever network its host has */
        readonly mode: "off" | "policy" | "open" | "unenforced";
        /** one line: off, a policy of N hosts, or open and unsafe */
        readonly text: string;
        /** host patterns the policy allows (allow entries and presets' patterns) */
        readonly hosts: number;
        /** whose setting decides: the global one the session opened with, or the session's own since it was changed */
        readonly from: "global" | "session";
        /** the `network` value in force */
        readonly setting:
          | boolean
          | {
              readonly [key: string]: unknown;
            };
        readonly connections: {
          readonly allowed: number;
          readonly denied: number;
          readonly failed: number;
          readonly bytes: number;
          /** records no longer listed (past the session's bound) */
          readonly dropped: number;
        };
        /** what the session ignores, e.g. a project file that sets network */
        readonly diagnostics: readonly string[];
      };
      readonly records: readonly {
        /** its place in the session's list, from 1 */
        readonly seq: number;
        /** when it arrived, ms since the epoch */
        readonly at: number;
        readonly host: string;
        readonly port: number;
        readonly method: string | null;
        readonly path: string | null;
        readonly decision: "allowed" | "denied" | "failed";
        /** the setting that allowed it */
        readonly rule: string | null;
        /** why it was refused, or what failed */
        readonly reason: string | null;
        /** whether the proxy spoke TLS itself to add secret headers */
        readonly intercepted: boolean;
        readonly bytes_up: number;
        readonly bytes_down: number;
        readonly duration_ms: number;
      }[];
      /** pass as `after` for the next page; null when this page reached the newest */
      readonly next_after: number | null;
    };
  };
  /** Change the session's network policy for its kernel's next connection, without a restart (N-1) */
  readonly patchNetwork: {
    readonly params: { readonly id: string };
    readonly body: {
      /** PATTERNs added to network.allow (and dropped from deny) */
      readonly allow?: readonly string[];
      /** PATTERNs added to network.deny (and dropped from allow) */
      readonly deny?: readonly string[];
      /** back to the setting the session opened with (its own from POST /sessions, else the global one), before allow and deny apply */
      readonly reset?: boolean;
    };
    readonly answer: {
      readonly session_id: string;
      readonly network: {
        /** "unenforced": the kernel runs unsandboxed or remotely, with whatever network its host has */
        readonly mode: "off" | "policy" | "open" | "unenforced";
        /** one line: off, a policy of N hosts, or open and unsafe */
        readonly text: string;
        /** host patterns the policy allows (allow entries and presets' patterns) */
        readonly hosts: number;
        /** whose setting decides: the global one the session opened with, or the session's own since it was changed */
        readonly from: "global" | "session";
        /** the `network` value in force */
        readonly setting:
          | boolean
          | {
              readonly [key: string]: unknown;
            };
        readonly connections: {
          readonly allowed: number;
          readonly denied: number;
          readonly failed: number;
          readonly bytes: number;
          /** records no longer listed (past the session's bound) */
          readonly dropped: number;
        };
        /** what the session ignores, e.g. a project file that sets network */
        readonly diagnostics: readonly string[];
      };
      readonly records: readonly {
        /** its place in the session's list, from 1 */
        readonly seq: number;
        /** when it arrived, ms since the epoch */
        readonly at: number;
        readonly host: string;
        readonly port: number;
        readonly method: string | null;
        readonly path: string | null;
        readonly decision: "allowed" | "denied" | "failed";
        /** the setting that allowed it */
        readonly rule: string | null;
        /** why it was refused, or what failed */
        readonly reason: string | null;
        /** whether the proxy spoke TLS itself to add secret headers */
        readonly intercepted: boolean;
        readonly bytes_up: number;
        readonly bytes_down: number;
        readonly duration_ms: number;
      }[];
      /** pass as `after` for the next page; null when this page reached the newest */
      readonly next_after: number | null;
    };
  };
  /** The session's transcript rows in order; also for a session that is no longer open */
  readonly getTranscript: {
    readonly params: { readonly id: string };
    readonly query: {
      /** only rows after this seq (default 0: from the start) */
      readonly after?: number;
      /** rows at most (default and most 1000) */
      readonly limit?: number;
    };
    readonly answer: TranscriptPage;
  };
  /** An admitted input: its receipt, delivery status and turn */
  readonly getOperation: {
    readonly params: { readonly id: string };
    readonly answer: Operation;
  };
  /** The global settings file, and a project's with ?workspace= */
  readonly getSettings: {
    readonly query: {
      /** also read this workspace's project settings */
      readonly workspace?: string;
    };
    readonly answer: SettingsDocument;
  };
  /** Change one settings file, against the revision read before (D-4) */
  readonly patchSettings: {
    readonly body: SettingsPatchBody;
    readonly ifMatch: true;
    readonly answer: SettingsFile;
  };
  /** A one-time login link for the web console; the bearer token only, never a web login */
  readonly createWebLogin: {
    readonly answer: WebLogin;
  };
  /** Trade a login link's code, once, for a web console login: the page secret in the body, the cookie in Set-Cookie */
  readonly redeemWebLogin: {
    readonly body: WebLoginBody;
    readonly answer: WebPageLogin;
  };
  /** Give the login of this page secret a new cookie, the old one void (another program replaced or removed it) */
  readonly renewWebCookie: {
    readonly answer: undefined;
  };
  /** End the web console login of this page secret, and clear its cookie */
  readonly webLogout: {
    readonly answer: undefined;
  };
}

export type JsonValue =
  | string
  | number
  | boolean
  | null
  | readonly JsonValue[]
  | {
      readonly [key: string]: JsonValue;
    };

export type Settings = {
  readonly skills?: {
    readonly default?: "on" | "off";
    readonly on?: readonly string[];
    readonly off?: readonly string[];
  };
  readonly python?: {
    readonly packages?: readonly string[];
  };
  readonly sandbox?: "auto" | "required" | "off";
  readonly kernel?: {
    readonly pool?: number;
    readonly kernelspec?: string;
    readonly python?: string;
    readonly remote?: unknown;
    readonly checkpoints?: boolean;
  };
  readonly daemon?: {
    readonly max_sessions?: number;
  };
  readonly limits?: {
    readonly memoryMB?: number;
    readonly processes?: number;
    readonly openFiles?: number;
    readonly shmMB?: number;
    readonly packagesMB?: number;
  };
  readonly model?: {
    readonly provider?: "openai" | "anthropic" | "stub";
    readonly base_url?: string;
    readonly name?: string;
    readonly api_key_env?: string;
    readonly mode?: "code" | "tool";
    readonly context_tokens?: number;
    readonly max_tokens?: number;
    readonly images?: boolean;
    readonly script?: string;
  };
  readonly network?: unknown;
  readonly mcp?: {
    readonly servers?: {
      readonly [key: string]: unknown;
    };
  };
  readonly [key: string]: unknown;
};

export type Kernel = {
  readonly status: "starting" | "ready" | "busy" | "idle" | "restarting" | "dead" | "stopped" | "none" | "external";
  readonly pid: number | null;
  /** "bwrap" when the kernel runs in bubblewrap, else "none" */
  readonly sandbox: string;
  /** paths the sandbox was asked to show but did not bind, and why */
  readonly sandbox_notes: readonly string[];
  /** whether the kernel came from the pool of spares */
  readonly warm: boolean;
  /** whether the kernel checkpoints its namespace after each cell (K-15) */
  readonly checkpoints: boolean;
  /** the last restore of this session's kernel, or null */
  readonly restore:
    | {
        /** why it ran: the supervisor restarted a dead kernel, the user restarted with restore, or a new session resumed a closed one */
        readonly trigger: "crash" | "restart" | "resume";
        /** an ISO 8601 time */
        readonly at: string;
        /** the names that came back */
        readonly restored: readonly string[];
        /** the names that did not, each with why (not picklable, over a bound, failed to load) */
        readonly lost: readonly {
          readonly name: string;
          readonly reason: string;
        }[];
        /** names past the listing's bound, counted only */
        readonly unlisted: number;
        /** why nothing could be restored, or null */
        readonly error: string | null;
        /** one line: restored 14 of 15 names; lost: conn (socket) */
        readonly summary: string;
      }
    | null;
};

export type Command = {
  readonly name: string;
  readonly description: string;
  readonly arguments: readonly {
    readonly name: string;
    readonly help: string;
    readonly required: boolean;
  }[];
  readonly callers: readonly ("user" | "model")[];
  readonly submits_turn: boolean;
};

export type Session = {
  readonly id: string;
  readonly workspace: string;
  readonly status: "open";
  /** who opened it, as POST /sessions said ("api" when it did not) */
  readonly client: "console" | "chat" | "web" | "notebook" | "mcp" | "api";
  /** when the daemon handed the session to its client */
  readonly opened_at: string;
  readonly kernel: Kernel;
  /** the catalog snapshot the session serves */
  readonly revision: string;
  /** everything discovered, enabled or not */
  readonly discovered_revision: string;
  readonly needs_reload: boolean;
  readonly selection: {
    readonly settings_revision: string;
    readonly scopes: {
      readonly global?: Settings;
      readonly project?: Settings;
      readonly session?: Settings;
    };
    readonly effective: {
      readonly [key: string]: {
        readonly enabled: boolean;
        readonly decided_by: "session" | "project" | "global" | "default";
      };
    };
  };
  readonly composition: {
    readonly extensions: {
      readonly python: {
        readonly enabled: true;
        readonly routes: readonly string[];
        readonly commands: number;
      };
      readonly skills: {
        readonly enabled: boolean;
        readonly depends_on: readonly ("python" | "skills" | "mcp")[];
        readonly skills: number;
        readonly instructions: readonly string[];
        readonly routes: readonly string[];
        readonly commands: number;
      };
      readonly mcp: {
        /** whether the session has MCP servers: configured when it opened, or found by a reload since */
        readonly enabled: boolean;
        readonly depends_on: readonly ("python" | "skills" | "mcp")[];
        readonly routes: readonly string[];
        /** each configured server with its status and what went wrong, never a secret */
        readonly servers: readonly {
          readonly name: string;
          readonly origin: "global" | "project";
          readonly status: "starting" | "running" | "failed" | "stopped" | "disabled";
          readonly tools: number;
          readonly diagnostics: readonly string[];
        }[];
      };
    };
  };
  readonly commands: readonly Command[];
  /** the tokens this session's turns used so far, summed; null until an endpoint reported any */
  readonly usage:
    | {
        /** every prompt token sent, read from a cache or not */
        readonly input_tokens: number;
        readonly output_tokens: number;
        /** of input_tokens, those read from the endpoint's prompt cache */
        readonly cache_read_tokens: number;
        /** of input_tokens, those written to the endpoint's prompt cache */
        readonly cache_write_tokens: number;
        /** the model calls whose usage was reported */
        readonly model_calls: number;
      }
    | null;
  readonly network: {
    /** "unenforced": the kernel runs unsandboxed or remotely, with whatever network its host has */
    readonly mode: "off" | "policy" | "open" | "unenforced";
    /** one line: off, a policy of N hosts, or open and unsafe */
    readonly text: string;
    /** host patterns the policy allows (allow entries and presets' patterns) */
    readonly hosts: number;
    /** whose setting decides: the global one the session opened with, or the session's own since it was changed */
    readonly from: "global" | "session";
    /** the `network` value in force */
    readonly setting:
      | boolean
      | {
          readonly [key: string]: unknown;
        };
    readonly connections: {
      readonly allowed: number;
      readonly denied: number;
      readonly failed: number;
      readonly bytes: number;
      /** records no longer listed (past the session's bound) */
      readonly dropped: number;
    };
    /** what the session ignores, e.g. a project file that sets network */
    readonly diagnostics: readonly string[];
  };
};

export type CreatedSession = {
  readonly id: string;
  readonly workspace: string;
  readonly status: "open";
  /** who opened it, as POST /sessions said ("api" when it did not) */
  readonly client: "console" | "chat" | "web" | "notebook" | "mcp" | "api";
  /** when the daemon handed the session to its client */
  readonly opened_at: string;
  readonly kernel: Kernel;
  /** the catalog snapshot the session serves */
  readonly revision: string;
  /** everything discovered, enabled or not */
  readonly discovered_revision: string;
  readonly needs_reload: boolean;
  readonly selection: {
    readonly settings_revision: string;
    readonly scopes: {
      readonly global?: Settings;
      readonly project?: Settings;
      readonly session?: Settings;
    };
    readonly effective: {
      readonly [key: string]: {
        readonly enabled: boolean;
        readonly decided_by: "session" | "project" | "global" | "default";
      };
    };
  };
  readonly composition: {
    readonly extensions: {
      readonly python: {
        readonly enabled: true;
        readonly routes: readonly string[];
        readonly commands: number;
      };
      readonly skills: {
        readonly enabled: boolean;
        readonly depends_on: readonly ("python" | "skills" | "mcp")[];
        readonly skills: number;
        readonly instructions: readonly string[];
        readonly routes: readonly string[];
        readonly commands: number;
      };
      readonly mcp: {
        /** whether the session has MCP servers: configured when it opened, or found by a reload since */
        readonly enabled: boolean;
        readonly depends_on: readonly ("python" | "skills" | "mcp")[];
        readonly routes: readonly string[];
        /** each configured server with its status and what went wrong, never a secret */
        readonly servers: readonly {
          readonly name: string;
          readonly origin: "global" | "project";
          readonly status: "starting" | "running" | "failed" | "stopped" | "disabled";
          readonly tools: number;
          readonly diagnostics: readonly string[];
        }[];
      };
    };
  };
  readonly commands: readonly Command[];
  /** the tokens this session's turns used so far, summed; null until an endpoint reported any */
  readonly usage:
    | {
        /** every prompt token sent, read from a cache or not */
        readonly input_tokens: number;
        readonly output_tokens: number;
        /** of input_tokens, those read from the endpoint's prompt cache */
        readonly cache_read_tokens: number;
        /** of input_tokens, those written to the endpoint's prompt cache */
        readonly cache_write_tokens: number;
        /** the model calls whose usage was reported */
        readonly model_calls: number;
      }
    | null;
  readonly network: {
    /** "unenforced": the kernel runs unsandboxed or remotely, with whatever network its host has */
    readonly mode: "off" | "policy" | "open" | "unenforced";
    /** one line: off, a policy of N hosts, or open and unsafe */
    readonly text: string;
    /** host patterns the policy allows (allow entries and presets' patterns) */
    readonly hosts: number;
    /** whose setting decides: the global one the session opened with, or the session's own since it was changed */
    readonly from: "global" | "session";
    /** the `network` value in force */
    readonly setting:
      | boolean
      | {
          readonly [key: string]: unknown;
        };
    readonly connections: {
      readonly allowed: number;
      readonly denied: number;
      readonly failed: number;
      readonly bytes: number;
      /** records no longer listed (past the session's bound) */
      readonly dropped: number;
    };
    /** what the session ignores, e.g. a project file that sets network */
    readonly diagnostics: readonly string[];
  };
  readonly rpc?: {
    readonly endpoint: string;
    readonly token: string;
    readonly deadline_ms: number;
    readonly max_message_bytes: number;
    readonly extensions: readonly ("python" | "skills" | "mcp")[];
  };
  readonly relay?: {
    /** a ZeroMQ address, ipc://PATH */
    readonly shell: string;
    /** a ZeroMQ address, ipc://PATH */
    readonly iopub: string;
    /** a ZeroMQ address, ipc://PATH */
    readonly stdin: string;
    /** a ZeroMQ address, ipc://PATH */
    readonly control: string;
    /** a ZeroMQ address, ipc://PATH */
    readonly hb: string;
    /** the kernel's process (in a sandbox, the sandbox's): the relay ends when it does */
    readonly kernel_pid: number;
  };
};

export type SessionList = {
  readonly sessions: readonly Session[];
  /** with `closed=resumable`: the closed sessions that can be resumed, most recently checkpointed first */
  readonly resumable?: readonly {
    /** the closed session's id, for `resume` */
    readonly id: string;
    /** the workspace it ran on; a resume opens there */
    readonly workspace: string;
    /** when it was closed; null when the process that ran it died without closing it */
    readonly closed_at: string | null;
    /** when its kernel last wrote the checkpoint */
    readonly checkpointed_at: string;
  }[];
};

export type Output = {
  readonly msg_type: string;
  readonly content: {
    readonly [key: string]: JsonValue;
  };
};

export type ExecuteAnswer = {
  readonly execution_id: string;
  readonly status: "ok" | "error" | "aborted";
  readonly execution_count: number | null;
  readonly outputs: readonly Output[];
  /** the images the execution showed, checked, scaled and kept, in output order (at most MAX_IMAGES_PER_EXECUTION) */
  readonly images: readonly Image[];
  /** one line per image shown but not kept: bad bytes, a bomb, an SVG, past the per-execution bound or the session's quota */
  readonly image_notes: readonly string[];
  readonly dropped_outputs: number;
  readonly dropped_output_bytes: number;
  /** text the kernel paged instead of printing it (IPython's `obj?` help) */
  readonly pages: readonly string[];
};

export type ReloadAnswer = {
  /** a SHA-256 (hex) of what the resource depends on */
  readonly revision: string;
  /** a SHA-256 (hex) of what the resource depends on */
  readonly previous_revision: string;
  /** skills the reload added */
  readonly added: readonly string[];
  /** skills the reload removed */
  readonly removed: readonly string[];
  /** skills the reload found that did not load (one broken before the reload is not repeated) */
  readonly failed: readonly {
    /** the skill's folder */
    readonly name: string;
    /** the first error in its SKILL.md */
    readonly message: string;
  }[];
  readonly skills: number;
  /** what the reload did to the session's MCP servers; the first servers of a session opened without any start here too */
  readonly mcp: {
    readonly added: readonly string[];
    readonly removed: readonly string[];
    /** their entry changed */
    readonly restarted: readonly string[];
    /** configured before but not running (awaiting approval, disabled), now started */
    readonly started: readonly string[];
    /** still configured, no longer running (disabled, or a changed project entry awaiting approval) */
    readonly stopped: readonly string[];
  };
};

export type Catalog = {
  /** a SHA-256 (hex) of what the resource depends on */
  readonly revision: string;
  readonly needs_reload: boolean;
  readonly skills: readonly {
    readonly id: string;
    readonly name: string;
    readonly preference_key: string | null;
    readonly description: string | null;
    readonly command: string | null;
    readonly source: string;
    readonly resolved_source: string | null;
    readonly scope: string;
    readonly status: "valid" | "invalid" | "shadowed";
    readonly diagnostics: readonly {
      readonly severity: "error" | "warning";
      readonly code: string;
      readonly path: string;
      readonly message: string;
    }[];
    readonly global_preference: ("on" | "off") | null;
    readonly project_preference: ("on" | "off") | null;
    readonly session_override: ("on" | "off") | null;
    readonly effective: {
      readonly enabled: boolean;
      readonly decided_by: "session" | "project" | "global" | "default" | "invalid" | "shadowed" | "extension";
    };
    readonly shadowed_by: string | null;
  }[];
  readonly instructions: readonly {
    readonly scope: string;
    readonly path: string;
    readonly resolved_path: string;
    readonly size: number;
    readonly truncated: boolean;
    readonly sha256: string;
    readonly enabled: boolean;
  }[];
  readonly diagnostics: readonly {
    readonly severity: "error" | "warning";
    readonly code: string;
    readonly path: string;
    readonly message: string;
  }[];
};

export type SettingsFile = {
  readonly scope: "global" | "project";
  readonly file: string;
  /** SHA-256 of the file's bytes, or "absent" */
  readonly revision: string;
  readonly settings: Settings;
};

export type SettingsDocument = {
  readonly global: SettingsFile;
  readonly project?: SettingsFile;
};

export type Receipt = {
  readonly operation_id: string;
  readonly session_id: string;
  readonly turn_id: string;
  readonly type: "message" | "command";
  /** an ISO 8601 time */
  readonly admitted_at: string;
};

export type Turn = {
  readonly turn_id: string;
  readonly operation_id: string;
  readonly session_id: string;
  /** what the transcript shows: the message, or the slash text as typed */
  readonly visible_text: string;
  /** the text the model is given: the message, or the activation block of a skill */
  readonly model_input: string;
  readonly state: "pending" | "running" | "committed" | "cancelled" | "abandoned";
  readonly outcome:
    | {
        readonly state: "committed";
        /** how the turn ended; a built-in run after admission is completed */
        readonly result: "completed" | "failed" | "interrupted";
        /** the model's prose answer, or a built-in command's result, as a JSON value */
        readonly reply: JsonValue;
        /** why a failed turn failed */
        readonly error: string | null;
        /** the tokens the turn's model calls used; null when the endpoint reported none, or for a built-in */
        readonly usage:
          | {
              /** every prompt token sent, read from a cache or not */
              readonly input_tokens: number;
              readonly output_tokens: number;
              /** of input_tokens, those read from the endpoint's prompt cache */
              readonly cache_read_tokens: number;
              /** of input_tokens, those written to the endpoint's prompt cache */
              readonly cache_write_tokens: number;
              /** the model calls whose usage was reported */
              readonly model_calls: number;
            }
          | null;
      }
    | {
        readonly state: "cancelled";
        readonly reason: string | null;
      }
    | {
        readonly state: "abandoned";
        readonly reason: string;
      }
    | null;
  /** an ISO 8601 time */
  readonly created_at: string;
  /** an ISO 8601 time */
  readonly updated_at: string;
};

export type Operation = {
  readonly operation_id: string;
  readonly delivery: "pending" | "committed" | "cancelled";
  readonly receipt: Receipt;
  readonly turn: Turn;
};

export type Health = {
  readonly ok: true;
  readonly pid: number;
  /** when the daemon process started */
  readonly started_at: string;
  /** sessions open */
  readonly sessions: number;
  readonly spares: readonly {
    readonly workspace: string;
    readonly skills: boolean;
    readonly state: "booting" | "ready";
    readonly pid: number | null;
  }[];
  readonly log:
    | {
        readonly file: string | null;
        readonly dropped_writes: number;
        readonly last_error: string | null;
        readonly suppressed_entries: number;
      }
    | null;
};

export type StreamMessage =
  | {
      readonly type: "status";
      readonly session_id: string;
      readonly kernel: Kernel;
      readonly reason: string | null;
      /** a SHA-256 (hex) of what the resource depends on */
      readonly revision: string;
    }
  | {
      readonly type: "output";
      readonly session_id: string;
      readonly execution_id: string;
      readonly msg_type: string;
      readonly content: {
        readonly [key: string]: JsonValue;
      };
    }
  | {
      readonly type: "transcript";
      readonly session_id: string;
      readonly turn: Turn;
    }
  | {
      readonly type: "row";
      readonly session_id: string;
      readonly row: TranscriptRow;
    }
  | {
      readonly type: "text";
      readonly session_id: string;
      readonly turn_id: string;
      /** the model's prose as it streams */
      readonly delta: string;
    }
  | {
      readonly type: "network";
      readonly session_id: string;
      /** "" on the line that sums the hosts past the bound of one window */
      readonly host: string;
      readonly port: number;
      readonly reason: string;
      /** how to allow it */
      readonly hint: string;
      /** the denials this line stands for: 1 as one happens, N for its repeats in a window */
      readonly count: number;
      /** the line as a terminal prints it */
      readonly text: string;
    };

export type Problem = {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: "bad_request" | "request_timeout" | "unauthorized" | "web_cookie_lost" | "route_not_found" | "method_not_allowed" | "upgrade_required" | "session_not_found" | "operation_not_found" | "command_not_found" | "invalid_json" | "invalid_body" | "invalid_query" | "unsupported_media_type" | "payload_too_large" | "too_deep" | "precondition_required" | "catalog_changed" | "settings_file_invalid" | "settings_path_unsafe" | "too_many_sessions" | "too_many_streams" | "too_many_connections" | "reload_required" | "not_found" | "invalid_params" | "limit_exceeded" | "forbidden" | "origin_not_allowed" | "mcp_session_not_found" | "mcp_session_required" | "cancelled" | "conflict" | "timeout" | "kernel_died" | "kernel_unavailable" | "operation_conflict" | "invalid_operation_id" | "operation_expired" | "operation_future" | "queue_full" | "insufficient_storage" | "storage_busy" | "storage_unavailable" | "internal_error";
  /** the body or query field at fault, e.g. skills.on[2] */
  readonly field?: string;
  readonly problems?: readonly {
    readonly path: string;
    readonly message: string;
  }[];
  readonly [key: string]: unknown;
};

export type OpenApiDocument = {
  readonly [key: string]: JsonValue;
};

export type WebPageLogin = {
  /** the page keeps it in its origin's sessionStorage and sends it as X-Albedo-Page on every request (the stream: as the subprotocol albedo.page.SECRET) */
  readonly page_secret: string;
};

export type TranscriptPage = {
  readonly session_id: string;
  readonly rows: readonly TranscriptRow[];
  /** pass as `after` for the next page; null when this page reached the end */
  readonly next_after: number | null;
};

export type TranscriptRow =
  | {
      readonly kind: "user";
      readonly text: string;
      readonly turn_id: string;
      /** the row's place in the session's transcript, from 1 */
      readonly seq: number;
      /** when it was written, in ms since the epoch */
      readonly at: number;
    }
  | {
      readonly kind: "assistant";
      readonly text: string;
      readonly turn_id: string;
      /** the row's place in the session's transcript, from 1 */
      readonly seq: number;
      /** when it was written, in ms since the epoch */
      readonly at: number;
    }
  | {
      readonly kind: "code";
      readonly code: string;
      readonly turn_id: string;
      /** the row's place in the session's transcript, from 1 */
      readonly seq: number;
      /** when it was written, in ms since the epoch */
      readonly at: number;
    }
  | {
      readonly kind: "output";
      readonly text: string;
      readonly status: "ok" | "error";
      readonly truncated: boolean;
      /** the cell's images kept for people, in output order; absent when it showed none */
      readonly images?: readonly Image[];
      readonly turn_id: string;
      /** the row's place in the session's transcript, from 1 */
      readonly seq: number;
      /** when it was written, in ms since the epoch */
      readonly at: number;
    }
  | {
      readonly kind: "skill";
      readonly skill: string;
      readonly bytes: number;
      readonly via: "tool" | "python" | "user";
      readonly already_loaded: boolean;
      readonly text: string;
      readonly turn_id: string;
      /** the row's place in the session's transcript, from 1 */
      readonly seq: number;
      /** when it was written, in ms since the epoch */
      readonly at: number;
    }
  | {
      readonly kind: "mcp";
      readonly server: string;
      readonly tool: string;
      readonly via: "python" | "tool";
      readonly ms: number;
      /** the result's size */
      readonly bytes: number;
      readonly is_error: boolean;
      readonly text: string;
      readonly turn_id: string;
      /** the row's place in the session's transcript, from 1 */
      readonly seq: number;
      /** when it was written, in ms since the epoch */
      readonly at: number;
    }
  | {
      readonly kind: "network";
      readonly host: string;
      readonly decision: "allowed" | "denied" | "failed";
      readonly connections: number;
      /** both ways, summed */
      readonly bytes: number;
      /** the setting that allowed it */
      readonly rule: string | null;
      /** why it was refused, or what failed */
      readonly reason: string | null;
      readonly text: string;
      readonly turn_id: string;
      /** the row's place in the session's transcript, from 1 */
      readonly seq: number;
      /** when it was written, in ms since the epoch */
      readonly at: number;
    }
  | {
      readonly kind: "notice";
      readonly text: string;
      readonly turn_id: string;
      /** the row's place in the session's transcript, from 1 */
      readonly seq: number;
      /** when it was written, in ms since the epoch */
      readonly at: number;
    }
  | {
      readonly kind: "error";
      readonly text: string;
      readonly turn_id: string;
      /** the row's place in the session's transcript, from 1 */
      readonly seq: number;
      /** when it was written, in ms since the epoch */
      readonly at: number;
    };

export type Image = {
  /** the SHA-256 of the bytes, 64 lower-case hex digits */
  readonly id: string;
  readonly mime: "image/png" | "image/jpeg" | "image/gif" | "image/webp";
  readonly width: number;
  readonly height: number;
  readonly bytes: number;
  /** GET it, with the token, for the bytes: /sessions/{id}/images/{image_id} */
  readonly url: string;
};

export type WebLogin = {
  /** the link's path on this daemon, its code in the fragment: `/login#code=…`, usable once */
  readonly path: string;
  /** when the link stops working */
  readonly expires_at: string;
};

export type OpenSessionBody = {
  /** an existing directory */
  readonly workspace: string;
  readonly extensions?: {
    readonly skills?: boolean;
  };
  /** "external": a notebook's running kernel joins the session (K-13); "relay": the session's own kernel, signing with a notebook's key, for its launcher to relay to (K-14) */
  readonly kernel?: "own" | "external" | "relay";
  /** the pid of that kernel; only with "kernel": "external" */
  readonly kernel_pid?: number;
  /** only with "kernel": "relay" */
  readonly relay?: {
    /** the HMAC key of the notebook's connection file */
    readonly key: string;
    /** the only scheme Jupyter uses */
    readonly signature_scheme: "hmac-sha256";
    /** the launcher's pid: the session (and its kernel) closes when that process is gone */
    readonly launcher_pid: number;
    /** the kernel's working directory: the notebook's directory, inside the workspace (default the workspace) */
    readonly cwd?: string;
  };
  /** run this session's kernel on that Jupyter Server (K-12), over the global kernel.remote settings */
  readonly remote?: {
    /** the server's base URL (http or https) */
    readonly url: string;
    readonly kernel_name?: string;
    /** sent as KERNEL_USERNAME */
    readonly username?: string;
    /** KERNEL_* variables for the server */
    readonly env?: {
      readonly [key: string]: string;
    };
  };
  /** who opens it, for the lists that show sessions (`albedo sessions`, the web console); "api" when absent */
  readonly client?: "console" | "chat" | "web" | "notebook" | "mcp" | "api";
  /** start from the checkpoint of this closed session (K-15): its names are loaded before the first cell; the workspace must be the one it ran on */
  readonly resume?: string;
  /** this session's own network policy in place of the global setting (a policy object, or false); true only while the global network setting is true. Its kernel is booted for it, not taken from the warm pool */
  readonly network?: unknown;
};

export type ExecuteBody = {
  readonly code: string;
  /** tags this execution's outputs on the stream; one is made when absent */
  readonly execution_id?: string;
};

export type CatalogPatchBody = {
  readonly on?: readonly string[];
  readonly off?: readonly string[];
  readonly clear?: readonly string[];
};

export type SettingsPatchBody = {
  readonly scope: "global" | "project";
  /** the project's directory; only with the project scope */
  readonly workspace?: string;
  readonly skills?: {
    readonly on?: readonly string[];
    readonly off?: readonly string[];
    readonly clear?: readonly string[];
    /** global scope only; null removes it */
    readonly default?: ("on" | "off") | null;
  };
  readonly sandbox?: ("auto" | "required" | "off") | null;
  readonly network?: unknown | null;
  readonly kernel?:
    | {
        readonly pool?: number;
        readonly kernelspec?: string;
        readonly python?: string;
        readonly remote?: unknown;
        readonly checkpoints?: boolean;
      }
    | null;
  readonly daemon?:
    | {
        readonly max_sessions?: number;
      }
    | null;
  readonly limits?:
    | {
        readonly memoryMB?: number;
        readonly processes?: number;
        readonly openFiles?: number;
        readonly shmMB?: number;
        readonly packagesMB?: number;
      }
    | null;
  readonly model?:
    | {
        readonly provider?: "openai" | "anthropic" | "stub";
        readonly base_url?: string;
        readonly name?: string;
        readonly api_key_env?: string;
        readonly mode?: "code" | "tool";
        readonly context_tokens?: number;
        readonly max_tokens?: number;
        readonly images?: boolean;
        readonly script?: string;
      }
    | null;
  readonly mcp?:
    | {
        readonly servers?: {
          readonly [key: string]: unknown;
        };
      }
    | null;
};

export type EventBody =
  | {
      /** a UUIDv7 the client chose, so that a retry is safe; when absent the daemon mints one */
      readonly operation_id?: string;
      readonly type: "message";
      readonly text: string;
    }
  | {
      /** a UUIDv7 the client chose, so that a retry is safe; when absent the daemon mints one */
      readonly operation_id?: string;
      readonly type: "command";
      readonly command: string;
      /** the raw argument text, as typed after the name (default: none) */
      readonly arguments?: string;
    };

export type WebLoginBody = {
  /** the code after `#code=` in the link `albedo web` opened */
  readonly code: string;
};
