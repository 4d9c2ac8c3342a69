/** The transport floor's other end: a ZeroMQ ROUTER in this process that sends every message back. */
import { Router } from "zeromq";

/**
 * Runs `body` with an echo bound at `endpoint`, and closes it after. The echo reads the way the
 * runtime's own sockets do (one awaited receive per message), so the floor is the least the
 * transport costs rather than a slower loop than the one it is compared with.
 */
export async function withEcho<T>(endpoint: string, body: () => Promise<T>): Promise<T> {
  const echo = new Router({ linger: 0 });
  await echo.bind(endpoint);
  const serving = (async () => {
    for (;;) await echo.send(await echo.receive());
  })().catch((error: unknown) => {
    // Closing ends the loop with whatever the receive or send under way fails with.
    if (!echo.closed) throw error;
  });
  try {
    return await body();
  } finally {
    echo.close();
    await serving;
  }
}
