import { describe, expect, it } from "vitest";
import { LOGIN_CODE_TTL_MS, MAX_PENDING_LOGIN_CODES, MAX_WEB_SESSIONS, WEB_SESSION_IDLE_MS } from "../../src/daemon/limits.js";
import { cookieValues, loginCookieHeader, presentedPageSecret, WebLogins } from "../../src/daemon/webLogins.js";

describe("W-2 one-time login codes, page secrets and login cookies", () => {
  it("a code works once and only within LOGIN_CODE_TTL_MS; a guess never works", () => {
    let now = 1_000;
    const logins = new WebLogins(() => now);
    const { code, expiresAt } = logins.issue();
    expect(expiresAt).toBe(now + LOGIN_CODE_TTL_MS);
    expect(logins.redeem("0".repeat(64))).toBeUndefined();
    const login = logins.redeem(code)!;
    expect(login.page).toMatch(/^[0-9a-f]{64}$/);
    expect(login.cookie).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set([login.page, login.cookie, code]).size).toBe(3);
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

  it("C1 neither half alone is a login: the page secret needs one of the cookies sent to be its own, and another login's cookie is not", () => {
    const logins = new WebLogins();
    const login = () => logins.redeem(logins.issue().code)!;
    const mine = login();
    const theirs = login();
    expect(logins.check(mine.page, [mine.cookie])).toBe("login");
    expect(logins.check(undefined, [mine.cookie])).toBe("none");
    expect(logins.check(mine.cookie, [mine.cookie])).toBe("none");
    expect(logins.check(mine.page, [])).toBe("cookie_lost");
    expect(logins.check(mine.page, [theirs.cookie])).toBe("cookie_lost");
    // A shadowing cookie under a longer path comes first; the login's own still counts.
    expect(logins.check(mine.page, ["shadow", mine.cookie])).toBe("login");
    expect(logins.check("not hex", [mine.cookie])).toBe("none");
  });

  it("C1 a renewed cookie replaces the login's old one; renewal needs a live page secret", () => {
    const logins = new WebLogins();
    const mine = logins.redeem(logins.issue().code)!;
    const renewed = logins.renewCookie(mine.page)!;
    expect(renewed).toMatch(/^[0-9a-f]{64}$/);
    expect(logins.check(mine.page, [mine.cookie])).toBe("cookie_lost");
    expect(logins.check(mine.page, [renewed])).toBe("login");
    expect(logins.renewCookie(mine.cookie)).toBeUndefined();
    expect(logins.renewCookie(undefined)).toBeUndefined();
  });

  it("a login lives WEB_SESSION_IDLE_MS past its last use, ends on logout, and at most MAX_WEB_SESSIONS live at once", () => {
    let now = 0;
    const logins = new WebLogins(() => now);
    const login = () => logins.redeem(logins.issue().code)!;
    const first = login();
    const live = (l: { page: string; cookie: string }) => logins.check(l.page, [l.cookie]) === "login";
    now += WEB_SESSION_IDLE_MS - 1;
    expect(live(first)).toBe(true);
    now += WEB_SESSION_IDLE_MS - 1;
    expect(live(first)).toBe(true);
    now += WEB_SESSION_IDLE_MS;
    expect(live(first)).toBe(false);
    const kept = login();
    logins.revoke(kept.page);
    expect(live(kept)).toBe(false);
    const many = Array.from({ length: MAX_WEB_SESSIONS + 1 }, login);
    expect(live(many[0]!)).toBe(false);
    expect(live(many.at(-1)!)).toBe(true);
  });

  it("reads every value of one cookie out of a Cookie header, in the order sent", () => {
    expect(cookieValues("a=1; albedo_web_8=abc ; b=2; albedo_web_8=def", "albedo_web_8")).toEqual(["abc", "def"]);
    expect(cookieValues("xalbedo_web_8=abc; albedo_web_9=x", "albedo_web_8")).toEqual([]);
    expect(cookieValues(undefined, "albedo_web_8")).toEqual([]);
  });

  it("finds the page secret in its header, or on an upgrade in the offered subprotocols", () => {
    expect(presentedPageSecret({ "x-albedo-page": "abc" })).toBe("abc");
    expect(presentedPageSecret({ "sec-websocket-protocol": "albedo.stream, albedo.page.abc" })).toBe("abc");
    expect(presentedPageSecret({ "sec-websocket-protocol": "albedo.stream" })).toBeUndefined();
    expect(presentedPageSecret({})).toBeUndefined();
  });

  it("names the cookie with the daemon's port, HttpOnly and SameSite=Strict; an empty value clears it", () => {
    expect(loginCookieHeader(8123, "v")).toBe("albedo_web_8123=v; HttpOnly; SameSite=Strict; Path=/");
    expect(loginCookieHeader(8123, "")).toBe("albedo_web_8123=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0");
  });
});
