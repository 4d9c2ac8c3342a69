/**
 * The page's half of its login. The daemon gives a login two secrets: a cookie, which the browser
 * also sends to every other server on 127.0.0.1, and a page secret, which only this origin can read.
 * The page keeps the secret in its origin's sessionStorage and sends it on every request; the
 * daemon wants both. A new tab of the console asks an open one for the secret over a
 * BroadcastChannel, which only pages of this origin share.
 */
import {
  ROUTES, WEB_COOKIE_LOST, WEB_LOGIN_PATH, WEB_PAGE_HEADER, WEB_PAGE_PROTOCOL_PREFIX, WEB_STREAM_PROTOCOL, type Problem, type WebLoginBody, type WebPageLogin,
} from "./generated/contract.js";

/** Where this tab keeps its page secret. */
const STORAGE_KEY = "albedo.page_secret";
/** The channel the console's tabs of this origin share their login on. */
const CHANNEL = "albedo.login";
/** How long a new tab waits for an open one to hand it the login. */
const HANDOFF_WAIT_MS = 400;

type Message = { readonly type: "ask" } | { readonly type: "secret"; readonly secret: string } | { readonly type: "logout" };

const channel = typeof BroadcastChannel === "undefined" ? undefined : new BroadcastChannel(CHANNEL);
let secret: string | undefined = sessionStorage.getItem(STORAGE_KEY) ?? undefined;
let onLogout: () => void = () => undefined;

function keep(value: string | undefined): void {
  secret = value;
  if (value === undefined) sessionStorage.removeItem(STORAGE_KEY);
  else sessionStorage.setItem(STORAGE_KEY, value);
}

if (channel !== undefined) {
  channel.onmessage = (event: MessageEvent<Message>) => {
    const message = event.data;
    if (message.type === "ask" && secret !== undefined) channel.postMessage({ type: "secret", secret } satisfies Message);
    else if (message.type === "logout") {
      keep(undefined);
      onLogout();
    }
  };
}

/** How the page stands when it starts: logged in, out, or holding a login link that did not work (why). */
export type LoginState = { readonly state: "in" | "out"; readonly why?: string };

/**
 * Establishes the login: trades the code of a login link (`/login#code=…`, the fragment never sent
 * to any server) once, or finds this tab's secret, or asks another open tab of the console for it.
 */
export async function establishLogin(logout: () => void): Promise<LoginState> {
  onLogout = logout;
  if (location.pathname === WEB_LOGIN_PATH) {
    const code = new URLSearchParams(location.hash.slice(1)).get("code") ?? "";
    // The code goes from the address bar and the history entry before anything else happens.
    history.replaceState(null, "", "/");
    return redeem(code);
  }
  if (secret === undefined) keep(await askOtherTabs());
  return secret === undefined ? { state: "out" } : { state: "in" };
}

async function redeem(code: string): Promise<LoginState> {
  const { method, path } = ROUTES.redeemWebLogin;
  const response = await fetch(path, { method, credentials: "same-origin", headers: { "content-type": "application/json" }, body: JSON.stringify({ code } satisfies WebLoginBody) });
  if (!response.ok) {
    const problem = (await response.json().catch(() => ({}))) as Partial<Problem>;
    // A tab that was logged in already stays so; it only says the link did not work.
    return { state: secret === undefined ? "out" : "in", why: problem.detail ?? `the daemon answered ${response.status}` };
  }
  keep(((await response.json()) as WebPageLogin).page_secret);
  return { state: "in" };
}

function askOtherTabs(): Promise<string | undefined> {
  if (channel === undefined) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const listener = (event: MessageEvent<Message>) => {
      if (event.data.type !== "secret") return;
      finish(event.data.secret);
    };
    const finish = (found: string | undefined) => {
      clearTimeout(timer);
      channel.removeEventListener("message", listener);
      resolve(found);
    };
    const timer = setTimeout(() => finish(undefined), HANDOFF_WAIT_MS);
    channel.addEventListener("message", listener);
    channel.postMessage({ type: "ask" } satisfies Message);
  });
}

/** The headers that make a request this page's: its login's secret. */
export function loginHeaders(): Record<string, string> {
  return secret === undefined ? {} : { [WEB_PAGE_HEADER]: secret };
}

/** The subprotocols a stream is opened with: the stream's own, and this page's secret (a browser cannot set headers on an upgrade). */
export function streamProtocols(): string[] {
  return secret === undefined ? [WEB_STREAM_PROTOCOL] : [WEB_STREAM_PROTOCOL, `${WEB_PAGE_PROTOCOL_PREFIX}${secret}`];
}

/** Whether an answer says the login's cookie is gone or another's (another program on 127.0.0.1 can replace it). */
export const isCookieLost = (status: number, code: string | undefined): boolean => status === 401 && code === WEB_COOKIE_LOST;

/** Gives the login a new cookie with the page secret; false when the login itself has ended. */
export async function renewCookie(): Promise<boolean> {
  const { method, path } = ROUTES.renewWebCookie;
  const response = await fetch(path, { method, credentials: "same-origin", headers: loginHeaders() });
  return response.ok;
}

/** Forgets the login in this tab and every other tab of the console. */
export function forgetLogin(): void {
  keep(undefined);
  channel?.postMessage({ type: "logout" } satisfies Message);
}
