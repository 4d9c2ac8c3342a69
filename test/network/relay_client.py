"""A kernel's side of the egress tests: start the relay as a kernel would, set its variables, and
act as a cell. Prints one JSON object per line; the test reads them.

usage: relay_client.py SOCKET BUNDLE SCENARIO [ARG...]
  fetch URL...            GET each URL with urllib.request; status and body, or the error text
  requests URL...         the same with pip's vendored requests
  pip INDEX DEST NAME     pip download NAME from INDEX into DEST, in a child process (one retry: pip
                          prints a connection's error only when it retries)
  spam URL COUNT          hold COUNT connections to the relay, report, drop them, then fetch URL
  wheel DIR               build a tiny wheel (albedo_probe 1.0) in DIR
"""

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile


def say(**fields):
    print(json.dumps(fields), flush=True)


def fetch(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return {"url": url, "status": response.status, "body": response.read().decode()}
    except urllib.error.HTTPError as error:
        return {"url": url, "status": error.code, "reason": error.reason, "body": error.read().decode()}
    except (urllib.error.URLError, OSError) as error:
        return {"url": url, "error": str(error)}


def fetch_requests(url):
    from pip._vendor import requests

    try:
        response = requests.get(url, timeout=30)
        return {"url": url, "status": response.status_code, "body": response.text}
    except requests.exceptions.RequestException as error:
        return {"url": url, "error": str(error)}


def wait_until_idle(relay, seconds=10):
    """Waits (bounded) until the relay carries nothing: a closed client is noticed on its loop, a moment later."""
    deadline = time.monotonic() + seconds
    while relay.connections() > 0 and time.monotonic() < deadline:
        time.sleep(0.05)


def build_wheel(directory):
    name = "albedo_probe-1.0-py3-none-any.whl"
    files = {
        "albedo_probe/__init__.py": "VALUE = 42\n",
        "albedo_probe-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: albedo-probe\nVersion: 1.0\n",
        "albedo_probe-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: albedo-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{path},,\n" for path in files) + "albedo_probe-1.0.dist-info/RECORD,,\n"
    path = os.path.join(directory, name)
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in files.items():
            archive.writestr(member, text)
        archive.writestr("albedo_probe-1.0.dist-info/RECORD", record)
    with open(path, "rb") as handle:
        say(wheel=name, sha256=hashlib.sha256(handle.read()).hexdigest())


def main():
    socket_path, bundle, scenario, *args = sys.argv[1:]
    if scenario == "wheel":
        return build_wheel(args[0])
    from albedo._egress import proxy_env, start_relay

    relay = start_relay(socket_path)
    os.environ.update(proxy_env(relay.port, bundle or None))
    say(port=relay.port)
    if scenario == "fetch":
        for url in args:
            say(**fetch(url))
    elif scenario == "requests":
        for url in args:
            say(**fetch_requests(url))
    elif scenario == "pip":
        index, dest, name = args
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir", "--disable-pip-version-check", "--retries", "1", "--index-url", index, "--dest", dest, name]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        say(returncode=done.returncode, output=done.stdout + done.stderr, files=sorted(os.listdir(dest)))
    elif scenario == "spam":
        url, count = args[0], int(args[1])
        held = []
        for _ in range(count):
            try:
                held.append(socket.create_connection(("127.0.0.1", relay.port), timeout=5))
            except OSError as error:
                say(connect_error=str(error))
                break
        time.sleep(0.5)
        say(held=len(held), carried=relay.connections())
        refused = fetch(url)
        for sock in held:
            sock.close()
        wait_until_idle(relay)
        after = fetch(url)
        wait_until_idle(relay)
        say(while_full=refused, after=after, carried=relay.connections())
    relay.close()
    say(closed=True)


main()
