import { describe, expect, it } from "vitest";
import { LOGIN_CODE_TTL_MS, MAX_PENDING_LOGIN_CODES, MAX_WEB_SESSIONS, WEB_SESSION_IDLE_MS } from "../../src/daemon/limits.js";
import { cookieValue, WebLogins } from "../../src/daemon/webLogins.js";

describe("W-2 one-time login codes and login cookies", () => {
  it("a code works once and only within LOGIN_CODE_TTL_MS; a guess never works", () => {
    let now = 1_000;
    const logins = new WebLogins(() => now);
    const { code, expiresAt } = logins.issue();
    expect(expiresAt).toBe(now + LOGIN_CODE_TTL_MS);
    expect(logins.redeem("0".repeat(64))).toBeUndefined();
    const cookie = logins.redeem(code);
    expect(cookie).toMatch(/^[0-9a-f]{64}$/);
    expect(cookie).not.toBe(code);
    expect(logins.redeem(code)).toBeUndefined();
    const late = logins.issue();
    now += LOGIN_CODE_TTL_MS;
    expect(logins.redeem(late.code)).toBeUndefined();
  });

  it("keeps at most MAX_PENDING_LOGIN_CODES codes, forgetting the oldest", () => {
    const logins = new WebLogins();
    const codes = Array.from({ length: MAX_PENDING_LOGIN_CODES + 1 }, () => logins.issue().code);
    expect(logins.redeem(codes[0]!)).toBeUndefined();
    expect(logins.redeem(codes.at(-1)!)).toBeDefined();
  });

  it("a cookie lives WEB_SESSION_IDLE_MS past its last use, ends on logout, and at most MAX_WEB_SESSIONS live at once", () => {
    let now = 0;
    const logins = new WebLogins(() => now);
    const login = () => logins.redeem(logins.issue().code)!;
    const cookie = login();
    now += WEB_SESSION_IDLE_MS - 1;
    expect(logins.check(cookie)).toBe(true);
    now += WEB_SESSION_IDLE_MS - 1;
    expect(logins.check(cookie)).toBe(true);
    now += WEB_SESSION_IDLE_MS;
    expect(logins.check(cookie)).toBe(false);
    const kept = login();
    logins.revoke(kept);
    expect(logins.check(kept)).toBe(false);
    const many = Array.from({ length: MAX_WEB_SESSIONS + 1 }, login);
    expect(logins.check(many[0]!)).toBe(false);
    expect(logins.check(many.at(-1)!)).toBe(true);
    expect(logins.check(undefined)).toBe(false);
  });

  it("reads one cookie out of a Cookie header", () => {
    expect(cookieValue("a=1; albedo_web=abc ; b=2", "albedo_web")).toBe("abc");
    expect(cookieValue("xalbedo_web=abc", "albedo_web")).toBeUndefined();
    expect(cookieValue(undefined, "albedo_web")).toBeUndefined();
  });
});
