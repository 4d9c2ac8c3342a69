/** What albedo's MCP server needs from the session it serves (a Session implements it). */
import type { ExecuteFuture } from "../kernel/index.js";
import type { Disposable } from "../platform/index.js";
import type { SessionView } from "../session/index.js";
import type { Activation, ReadResult, ResourceListing } from "../skills/index.js";

export interface ServedSession {
  readonly id: string;
  readonly workspace: string;
  /** The current view: its snapshot (the enabled skills) and commands. */
  readonly view: SessionView;
  execute(code: string): ExecuteFuture;
  interrupt(): Promise<void>;
  /** A skill's activation through the session's guarded skill access (C-5). */
  activate(skill: string, text: string): Promise<Activation>;
  /** A skill's resource listing through the same access. */
  resources(skill: string): Promise<ResourceListing>;
  /** One page of a skill's resource, pinned, through the same access. */
  readResource(skill: string, path: string, offset: number, limit: number): Promise<ReadResult>;
  /** `/reload session` (K-7): what the reload command answers. */
  reload(): Promise<unknown>;
  onViewChange(listener: (view: SessionView) => void): Disposable;
  /** What the python tool's description says of the kernel: whether it runs in the sandbox. */
  status(): { readonly sandbox: string };
}
