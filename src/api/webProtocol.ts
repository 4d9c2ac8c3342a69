/**
 * What the web console's page and the daemon must agree on to log in, written once: the daemon
 * imports this file, and the page gets the same names in its generated contract (pageContract.ts).
 */

/** The header the page sends its login's page secret in, on every API request. */
export const WEB_PAGE_HEADER = "x-albedo-page";
/** The WebSocket subprotocol the page offers, and the daemon picks, for a session's stream. */
export const WEB_STREAM_PROTOCOL = "albedo.stream";
/** A browser cannot set headers on a WebSocket upgrade: the page offers its secret as a second subprotocol with this prefix. */
export const WEB_PAGE_PROTOCOL_PREFIX = "albedo.page.";
/** The path of the login link `albedo web` opens; its one-time code follows in the fragment, `#code=…`, which no request carries. */
export const WEB_LOGIN_PATH = "/login";
/** The problem code of a request whose page secret is live but whose login cookie is gone or another's: the page renews the cookie and asks again. */
export const WEB_COOKIE_LOST = "web_cookie_lost";
