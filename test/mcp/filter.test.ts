/** The tool filter of an entry (M-1) and the redaction of secrets in what albedo quotes (M-1, B). */
import { describe, expect, it } from "vitest";
import { globMatches, toolPolicy } from "../../src/mcp/glob.js";
import { REDACTED, Redactor } from "../../src/mcp/redact.js";

describe("M-1 tools.allow / tools.deny", () => {
  it("matches * and ? over the whole name; deny wins over allow; no allow means every tool", () => {
    expect(globMatches("search_*", "search_issues")).toBe(true);
    expect(globMatches("search_?", "search_ab")).toBe(false);
    expect(globMatches("*_issue?", "get_issues")).toBe(true);
    expect(globMatches("get", "get_issues")).toBe(false);
    const policy = toolPolicy({ allow: ["get_*", "search_*"], deny: ["*delete*", "get_secret"] });
    expect(["get_issue", "search_code", "get_secret", "delete_repo", "get_delete_me", "create"].filter((name) => policy.allows(name))).toEqual(["get_issue", "search_code"]);
    expect(toolPolicy({ deny: ["rm*"] }).allows("anything")).toBe(true);
    expect(toolPolicy(undefined).allows("x")).toBe(true);
  });

  it("B a pattern of many stars against a long name stays linear-ish (no backtracking blow-up)", () => {
    const glob = `${"*a".repeat(100)}b`;
    expect(globMatches(glob, "a".repeat(5000))).toBe(false);
  });
});

describe("M-1 B secrets in quoted server text", () => {
  it("redacts the value, its JSON and URL forms, and a bearer token echoed without its scheme", () => {
    const redactor = new Redactor(["Bearer tok_12345678", 'p"w/d']);
    expect(redactor.redact("auth was Bearer tok_12345678 ok")).toBe(`auth was ${REDACTED} ok`);
    expect(redactor.redact('{"token":"tok_12345678"}')).toBe(`{"token":"${REDACTED}"}`);
    expect(redactor.redact('x p\\"w/d y p%22w%2Fd')).toBe(`x ${REDACTED} y ${REDACTED}`);
  });

  it("quote folds whitespace, shows controls, cuts to its bound and never leaves half a secret at the cut", () => {
    const redactor = new Redactor(["supersecretvalue"]);
    expect(redactor.quote("a\n\tb\u001b[31m")).toBe("a b\u241b[31m");
    const cut = redactor.quote(`${"x".repeat(10)}supersecret`, 16, true);
    expect(cut).toBe(`${"x".repeat(10)}…`);
  });
});
