import type { Disposable } from "../platform/index.js";
import type { Activation, PathGuard, ReadResult, ResourceListing } from "../skills/index.js";
import type { SessionSkills } from "./port.js";
import { requireSkill, SkillAccess, type ActivationObserver } from "./skillAccess.js";
import type { SessionView } from "./view.js";

/**
 * The session's skills by name, through its one SkillAccess (the plan's guard bound in from the
 * start), in the catalog of the view current at each call.
 */
export class SkillFiles implements SessionSkills {
  private readonly observers = new Set<ActivationObserver>();
  /** The one access: the routes, the commands and every face read the skills' files through it. */
  readonly access: SkillAccess;

  constructor(guard: PathGuard | undefined, private readonly currentView: () => SessionView) {
    this.access = new SkillAccess(guard, this.observers);
  }

  activate(skill: string, text: string): Promise<Activation> {
    return this.access.activate(requireSkill(this.currentView(), skill), text);
  }

  resources(skill: string): Promise<ResourceListing> {
    return this.access.resources(requireSkill(this.currentView(), skill));
  }

  async read(skill: string, path: string, offset: number, limit: number): Promise<ReadResult> {
    return await this.access.read(requireSkill(this.currentView(), skill), path, offset, limit);
  }

  observe(observer: ActivationObserver): Disposable {
    this.observers.add(observer);
    return { dispose: () => void this.observers.delete(observer) };
  }
}
