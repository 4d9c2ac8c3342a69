import { AppError } from "../../../src/errors/index.js";
import type { ExecuteOutput, ExecuteReply, KernelStatus } from "../../../src/kernel/index.js";
import { Session } from "../../../src/session/index.js";
import { LiveSession } from "../../../src/daemon/live.js";
import { HttpProblem } from "../../../src/daemon/problem.js";
import type { HostedSession, OpenOptions, RunningExecution, SessionDirectory, SessionFace } from "../../../src/daemon/sessionPort.js";
import type { SpareStatus } from "../../../src/daemon/pool.js";
import { envFor, type Dirs } from "./daemon.js";

/** What the scripted kernel does for one cell: the outputs it sends, then its reply. */
export interface Script {
  readonly outputs: readonly { readonly msg_type: string; readonly content: Record<string, unknown> }[];
  readonly reply?: Partial<ExecuteReply>;
}

/** A kernel that answers each cell from a script instead of running Python. */
export class ScriptedKernel {
  status: KernelStatus = "idle";
  readonly pid = 4242;
  interrupts = 0;
  readonly cells: string[] = [];
  script: (code: string) => Script = () => ({ outputs: [] });

  execute(code: string): RunningExecution {
    this.cells.push(code);
    const { outputs, reply } = this.script(code);
    const listeners: ((output: ExecuteOutput) => void)[] = [];
    // Outputs arrive after the caller subscribed, as they would from iopub.
    const done = new Promise<ExecuteReply>((resolve) =>
      setImmediate(() => {
        for (const output of outputs) for (const listener of listeners) listener({ header: { msg_type: output.msg_type }, content: output.content } as unknown as ExecuteOutput);
        resolve({ status: "ok", execution_count: this.cells.length, user_expressions: {}, ...reply } as ExecuteReply);
      }),
    );
    return {
      onOutput: (listener) => {
        listeners.push(listener);
        return { dispose: () => listeners.splice(listeners.indexOf(listener), 1) };
      },
      done,
      cutOutputBytes: 0,
    };
  }
}

/**
 * The daemon's sessions for route tests: real sessions (discovery, settings, catalog, commands,
 * RPC routes) whose kernel is external, so none boots, with a scripted kernel for execute,
 * interrupt and status. Everything else of the session is the real thing.
 */
export class ScriptedSessions implements SessionDirectory {
  readonly kernel = new ScriptedKernel();
  private readonly sessions = new Map<string, { live: LiveSession; hosted: HostedSession }>();

  constructor(private readonly dirs: Dirs) {}

  async open(workspace: string, extensions: { skills?: boolean }, how: OpenOptions = {}): Promise<HostedSession> {
    const session = await Session.open({ workspace, home: this.dirs.home, stateDir: this.dirs.state, env: envFor(this.dirs), extensions, kernel: "external" });
    const live = new LiveSession(session, how.client ? { client: how.client } : {});
    const hosted = scripted(live, this.kernel);
    this.sessions.set(live.id, { live, hosted });
    return hosted;
  }

  get(id: string): HostedSession {
    const found = this.sessions.get(id);
    if (found === undefined) throw new HttpProblem("session_not_found", `no session ${id} in this daemon`, { session_id: id });
    return found.hosted;
  }

  get active(): number {
    return this.sessions.size;
  }

  list(): HostedSession[] {
    return [...this.sessions.values()].map((found) => found.hosted);
  }

  async close(id: string): Promise<void> {
    this.get(id);
    const { live } = this.sessions.get(id)!;
    this.sessions.delete(id);
    await live.close();
  }

  spares(): SpareStatus[] {
    return [];
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.sessions.keys()].map((id) => this.close(id)));
  }
}

/** `live` with its kernel replaced by `kernel`. */
function scripted(live: LiveSession, kernel: ScriptedKernel): HostedSession {
  const session = live.session;
  const face: SessionFace = {
    id: session.id,
    workspace: session.workspace,
    get view() {
      return session.view;
    },
    catalog: session.catalog,
    commands: session.commands,
    mcp: session.mcp,
    status: () => ({ ...session.status(), kernel: kernel.status, pid: kernel.pid }),
    methods: () => session.methods(),
    bridge: () => session.bridge(),
    kernel: {
      execute: (code) => kernel.execute(code),
      interrupt: async () => void (kernel.interrupts += 1),
    },
    reload: () => session.reload(),
    images: session.images,
    relayTarget: () => undefined,
    // A scripted kernel has no process to restart, and never restores.
    restart: async () => {
      throw new AppError("conflict", "a scripted kernel does not restart");
    },
    restores: { observe: () => ({ dispose: () => undefined }) },
    network: session.network,
  };
  return {
    id: live.id,
    client: live.client,
    openedAt: live.openedAt,
    warm: false,
    session: face,
    turns: live.turns,
    get subscribers() {
      return live.subscribers;
    },
    publish: (event) => live.publish(event),
    publishStatus: (status, reason) => live.publishStatus(status, reason),
    subscribe: (listener) => live.subscribe(listener),
    onClosed: (hook) => live.onClosed(hook),
  };
}
