"""Baseline for `npm run bench`: jupyter_client with its defaults, driven a batch at a time so the
bench can interleave it with albedo's own runs (both then see the same machine load).

Reads one command per line on stdin and answers each with one JSON line on stdout:
  open                  start a kernel, time start_new_kernel, shut it down   -> {"ms": t}
  boot                  start the kernel the next commands use                -> {"ms": t}
  execute N             N execute_interactive("1") round trips                 -> {"ms": [...]}
  timeline N            N executes, each split by the kernel's header dates    -> {"stages": {...}}
  concurrent N          N kernels started at once (start_new_async_kernel),
                        kept running for `pids` and `stop`                     -> {"ms": [...]}
  touch                 one execute_interactive("1") on each `concurrent` kernel -> {}
  pids                  process ids of the kernels started by `concurrent`     -> {"pids": [...]}
  stop                  shut the `concurrent` kernels down                     -> {}
  quit                  shut everything down and exit
Times are in ms; stages are per-execute lists in ms.
"""
import asyncio
import json
import sys
import time
from datetime import datetime

from jupyter_client.manager import start_new_async_kernel, start_new_kernel

STARTUP_TIMEOUT_S = 60
KERNEL_NAME = "python3"


def header_time(msg):
    """The kernel's own timestamp of a message, in seconds since the epoch."""
    stamp = msg["header"]["date"]
    return (stamp if isinstance(stamp, datetime) else datetime.fromisoformat(str(stamp))).timestamp()


def answer(value):
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


def timed_start():
    began = time.perf_counter()
    km, kc = start_new_kernel(kernel_name=KERNEL_NAME, startup_timeout=STARTUP_TIMEOUT_S)
    return km, kc, (time.perf_counter() - began) * 1000


def stop(km, kc):
    kc.stop_channels()
    km.shutdown_kernel(now=False)


def executes(kc, count):
    times = []
    for _ in range(count):
        began = time.perf_counter()
        reply = kc.execute_interactive("1", output_hook=lambda msg: None, timeout=STARTUP_TIMEOUT_S)
        times.append((time.perf_counter() - began) * 1000)
        assert reply["content"]["status"] == "ok"
    return times


def timeline(kc, count):
    """Per execute: client send -> kernel busy -> reply -> idle -> client has the idle -> client has both."""
    stages = {"send_to_busy": [], "busy_to_reply": [], "reply_to_idle": [], "idle_to_client": [], "client_settle": [], "total": []}
    for _ in range(count):
        sent = time.time()
        msg_id = kc.execute("1")
        busy = idle = idle_seen = None
        while idle is None:
            msg = kc.get_iopub_msg(timeout=STARTUP_TIMEOUT_S)
            if msg["parent_header"].get("msg_id") != msg_id or msg["msg_type"] != "status":
                continue
            if msg["content"]["execution_state"] == "busy":
                busy = header_time(msg)
            elif msg["content"]["execution_state"] == "idle":
                idle, idle_seen = header_time(msg), time.time()
        reply = kc.get_shell_msg(timeout=STARTUP_TIMEOUT_S)
        done = time.time()
        replied = header_time(reply)
        for name, value in (("send_to_busy", busy - sent), ("busy_to_reply", replied - busy), ("reply_to_idle", idle - replied),
                            ("idle_to_client", idle_seen - idle), ("client_settle", done - idle_seen), ("total", done - sent)):
            stages[name].append(value * 1000)
    return stages


async def start_at_once(count):
    async def one():
        began = time.perf_counter()
        km, kc = await start_new_async_kernel(kernel_name=KERNEL_NAME, startup_timeout=STARTUP_TIMEOUT_S)
        return km, kc, (time.perf_counter() - began) * 1000

    return await asyncio.gather(*[one() for _ in range(count)])


async def touch_all(kernels):
    await asyncio.gather(*[kc.execute_interactive("1", output_hook=lambda msg: None, timeout=STARTUP_TIMEOUT_S) for _, kc, _ in kernels])


async def stop_all(kernels):
    for km, kc, _ in kernels:
        kc.stop_channels()
    await asyncio.gather(*[km.shutdown_kernel(now=False) for km, _, _ in kernels])


def main():
    km = kc = None
    loop = asyncio.new_event_loop()
    many = []
    try:
        for line in sys.stdin:
            command, *args = line.split()
            if command == "open":
                km2, kc2, ms = timed_start()
                stop(km2, kc2)
                answer({"ms": ms})
            elif command == "boot":
                km, kc, ms = timed_start()
                answer({"ms": ms})
            elif command == "execute":
                answer({"ms": executes(kc, int(args[0]))})
            elif command == "timeline":
                answer({"stages": timeline(kc, int(args[0]))})
            elif command == "concurrent":
                many = loop.run_until_complete(start_at_once(int(args[0])))
                answer({"ms": [ms for _, _, ms in many]})
            elif command == "touch":
                loop.run_until_complete(touch_all(many))
                answer({})
            elif command == "pids":
                answer({"pids": [m.provisioner.pid for m, _, _ in many]})
            elif command == "stop":
                loop.run_until_complete(stop_all(many))
                many = []
                answer({})
            elif command == "quit":
                break
    finally:
        if many:
            loop.run_until_complete(stop_all(many))
        if km is not None:
            stop(km, kc)
        loop.close()


if __name__ == "__main__":
    main()
