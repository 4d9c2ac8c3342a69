import { AppError } from "../errors/index.js";
import {
  findSkill, listResources, prepareActivation, readResource,
  type Activation, type ActivationArguments, type PathGuard, type ReadResult, type ResourceListing, type SkillEntry,
} from "../skills/index.js";

/** The skill `name` of the view's snapshot; throws AppError not_found when the catalog has none of that name. */
export function requireSkill(view: { readonly snapshot: Parameters<typeof findSkill>[0] }, name: string): SkillEntry {
  const entry = findSkill(view.snapshot, name);
  if (entry === undefined) throw new AppError("not_found", `no skill named "${name}" in this session's catalog`);
  return entry;
}

/** Sees an activation the kernel's own code made, and may answer it instead (a skill the conversation already holds). */
export type ActivationObserver = (entry: SkillEntry, activation: Activation) => Activation;

/**
 * A session's way to its skills' files (C-5, R-1, R-2) with the sandbox's path guard bound in once.
 * The kernel's RPC routes, user and daemon activations all go through the session's one instance,
 * so no caller can reach a file the kernel's sandbox hides by forgetting the guard.
 */
export class SkillAccess {
  /**
   * `guard`: the sandbox's (absent when the kernel is not sandboxed, or belongs to a notebook: it
   * could read those files itself). `observers`: the session's, told of activations the kernel's
   * own code makes (a turn's visible pulls); `fromKernel` says whether this access serves that code.
   */
  constructor(
    private readonly guard: PathGuard | undefined,
    private readonly observers: ReadonlySet<ActivationObserver> = new Set(),
    private readonly fromKernel = false,
  ) {}

  /** The same access for calls made by the kernel's code over RPC: its activations pass through the observers. */
  forKernel(): SkillAccess {
    return new SkillAccess(this.guard, this.observers, true);
  }

  /** The activation payload of `entry` (see prepareActivation); throws AppError "forbidden" for a hidden place. */
  async activate(entry: SkillEntry, args: ActivationArguments): Promise<Activation> {
    let activation = await prepareActivation(entry, args, this.guard);
    if (this.fromKernel) for (const observer of this.observers) activation = observer(entry, activation);
    return activation;
  }

  /**
   * One page of a resource (see readResource): synchronous unless SKILL.md must be reread or the
   * file changed just now (see readResource). `arrival` is the RPC call's (CallContext.arrival), whose calls share pin checks.
   */
  read(entry: SkillEntry, resource?: string, offset?: number, limit?: number, arrival?: object): ReadResult | Promise<ReadResult> {
    return readResource(entry, resource, offset, limit, this.guard, arrival);
  }

  /** The skill's resource listing (see listResources). */
  resources(entry: SkillEntry): Promise<ResourceListing> {
    return listResources(entry, this.guard);
  }
}
