/**
 * The proxy's own answers: a status and one line of text, the line also as the status line's
 * reason phrase, since Python's http.client (pip, requests, urllib) reports a refused CONNECT by
 * its status line alone (`Tunnel connection failed: 403 albedo: …`).
 */
import type { ServerResponse } from "node:http";
import type { Duplex } from "node:stream";

/** What a client reads once its CONNECT tunnel is open. */
export const ESTABLISHED = "HTTP/1.1 200 Connection established\r\n\r\n";

export type AnswerStatus = 400 | 403 | 408 | 414 | 431 | 501 | 502 | 503;

/** Characters of a reason phrase; the body carries the whole line. */
const MAX_REASON_CHARS = 400;

/** The line as a reason phrase: printable ASCII only (a status line allows no more), cut. */
function reasonPhrase(line: string): string {
  const printable = line.replace(/[^\x20-\x7e]/g, "?");
  return printable.length > MAX_REASON_CHARS ? `${printable.slice(0, MAX_REASON_CHARS)}...` : printable;
}

function bodyOf(line: string): Buffer {
  return Buffer.from(`${line}\n`, "utf8");
}

const answered = new WeakSet<Duplex>();

/** Whether answerRaw has answered on `socket` already (the parser may complain again about bytes that follow). */
export function answeredRaw(socket: Duplex): boolean {
  return answered.has(socket);
}

/** Writes a whole response on a raw client socket (CONNECT, a request the parser refused, a refused connection) and ends it; once per socket. */
export function answerRaw(socket: Duplex, status: AnswerStatus, line: string): void {
  if (answered.has(socket)) return;
  answered.add(socket);
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = bodyOf(line);
  const head = `HTTP/1.1 ${status} ${reasonPhrase(line)}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`;
  socket.end(Buffer.concat([Buffer.from(head, "latin1"), body]));
}

/** Answers a parsed request with `status` and `line`, closing the connection after. */
export function answer(res: ServerResponse, status: AnswerStatus, line: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = bodyOf(line);
  res.writeHead(status, reasonPhrase(line), { "content-type": "text/plain; charset=utf-8", "content-length": body.length, connection: "close" });
  res.end(body);
}
