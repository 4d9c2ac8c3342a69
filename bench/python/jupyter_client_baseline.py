"""Baseline for `npm run bench`: jupyter_client's own kernel start and execute round trip.

Prints one JSON object: per-run start-to-ready times and per-cell execute round trips, in ms.
"""
import json
import sys
import time

from jupyter_client.manager import start_new_kernel

STARTS = int(sys.argv[1])
EXECUTES = int(sys.argv[2])
WARMUP = int(sys.argv[3]) if len(sys.argv) > 3 else 0
STARTUP_TIMEOUT_S = 60

starts = []
executes = []
for run in range(STARTS):
    began = time.perf_counter()
    km, kc = start_new_kernel(kernel_name="python3", startup_timeout=STARTUP_TIMEOUT_S)
    starts.append((time.perf_counter() - began) * 1000)
    try:
        if run == 0:
            for _ in range(WARMUP):
                kc.execute_interactive("1", output_hook=lambda msg: None, timeout=STARTUP_TIMEOUT_S)
            for _ in range(EXECUTES):
                began = time.perf_counter()
                reply = kc.execute_interactive("1", output_hook=lambda msg: None, timeout=STARTUP_TIMEOUT_S)
                executes.append((time.perf_counter() - began) * 1000)
                assert reply["content"]["status"] == "ok"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)
print(json.dumps({"start_ms": starts, "execute_ms": executes}))
