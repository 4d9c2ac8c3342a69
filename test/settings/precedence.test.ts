import { describe, expect, it } from "vitest";
import { effectiveEnablement, type Settings } from "../../src/settings/index.js";

const on = (...names: string[]): Settings => ({ skills: { on: names } });
const off = (...names: string[]): Settings => ({ skills: { off: names } });

describe("D-4 enablement precedence", () => {
  const table: Array<[string, { global?: Settings; project?: Settings; session?: Settings }, boolean, string]> = [
    ["nothing names it: default on", {}, true, "default"],
    ["global default off", { global: { skills: { default: "off" } } }, false, "default"],
    ["global default off, global on", { global: { skills: { default: "off", on: ["demo"] } } }, true, "global"],
    ["global on, project off", { global: on("demo"), project: off("demo") }, false, "project"],
    ["session on beats project off beats global on", { global: on("demo"), project: off("demo"), session: on("demo") }, true, "session"],
    ["session off beats project on", { project: on("demo"), session: off("demo") }, false, "session"],
    ["a scope naming other skills does not decide", { global: off("demo"), project: on("other"), session: off("other") }, false, "global"],
    ["project default is ignored: default comes from global only", { global: { skills: { default: "off" } }, project: { skills: {} } }, false, "default"],
  ];
  for (const [label, scopes, enabled, decidedBy] of table) {
    it(label, () => {
      expect(effectiveEnablement("demo", scopes)).toEqual({ enabled, decidedBy });
    });
  }

  it("compares names after NFKC normalisation", () => {
    expect(effectiveEnablement("ﬁle", { project: off("file") })).toEqual({ enabled: false, decidedBy: "project" });
  });
});
