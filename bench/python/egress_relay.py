"""The kernel package's egress relay for bench/network.ts: carries 127.0.0.1:PORT to the proxy's
Unix socket (argv[1]), prints the port, and runs until stdin closes. Run with the albedo kernel
package on PYTHONPATH, as a session kernel runs it."""

import sys

from albedo._egress import start_relay

relay = start_relay(sys.argv[1])
print(relay.port, flush=True)
sys.stdin.read()
relay.close()
