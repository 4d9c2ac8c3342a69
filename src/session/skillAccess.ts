import {
  listResources, prepareActivation, readResource,
  type Activation, type ActivationArguments, type PathGuard, type ReadResult, type ResourceListing, type SkillEntry,
} from "../skills/index.js";

/**
 * A session's way to its skills' files (C-5, R-1, R-2) with the sandbox's path guard bound in once.
 * The kernel's RPC routes, user and daemon activations all go through the session's one instance,
 * so no caller can reach a file the kernel's sandbox hides by forgetting the guard.
 */
export class SkillAccess {
  /** Access with no guard: the kernel is not sandboxed (or belongs to a notebook), so it could read those files itself. */
  static readonly unguarded = new SkillAccess(undefined);

  constructor(private readonly guard: PathGuard | undefined) {}

  /** The activation payload of `entry` (see prepareActivation); throws AppError "forbidden" for a hidden place. */
  activate(entry: SkillEntry, args: ActivationArguments): Promise<Activation> {
    return prepareActivation(entry, args, this.guard);
  }

  /** One page of a resource (see readResource). */
  read(entry: SkillEntry, resource?: string, offset?: number, limit?: number): Promise<ReadResult> {
    return readResource(entry, resource, offset, limit, this.guard);
  }

  /** The skill's resource listing (see listResources). */
  resources(entry: SkillEntry): Promise<ResourceListing> {
    return listResources(entry, this.guard);
  }
}
