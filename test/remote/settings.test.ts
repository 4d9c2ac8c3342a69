import { describe, expect, it } from "vitest";
import {
  REMOTE_PACE_BURST, REMOTE_PACE_PER_S, RemoteSettingsError, resolveRemoteKernel,
} from "../../src/kernel/index.js";
import { validateSettings } from "../../src/settings/index.js";
import { runPython } from "../rpc/helpers.js";

/** Jupyter Server 2.x's defaults: iopub_msg_rate_limit and rate_limit_window. */
const SERVER_MSG_RATE_LIMIT = 1_000;
const SERVER_RATE_WINDOW_S = 3;

describe("K-12 kernel.remote settings", () => {
  it("accepts a full section and refuses unknown fields, a token in the URL, a token instead of a variable name and non-KERNEL_ variables", () => {
    const good = { kernel: { remote: { url: "https://hub.example/user/me/", token_env: "MY_TOKEN", kernel_name: "python3", username: "me", env: { KERNEL_IMAGE: "img:1" } } } };
    expect(validateSettings(good, "global").ok).toBe(true);
    const bad = validateSettings({
      kernel: { remote: { url: "http://me:secret@host/?token=abc", token_env: "abc def", env: { PATH: "/x" }, extra: 1 } },
    }, "global");
    expect(bad.ok).toBe(false);
    const paths = bad.ok ? [] : bad.problems.map((problem) => problem.path);
    expect(paths).toEqual(expect.arrayContaining(["kernel.remote.url", "kernel.remote.token_env", "kernel.remote.env.PATH", "kernel.remote.extra"]));
    expect(JSON.stringify(bad)).not.toContain("secret");
  });

  it("resolves the global section and a per-run override: the token from the named variable, the username as KERNEL_USERNAME", () => {
    const resolved = resolveRemoteKernel(
      { url: "http://a:8888", token_env: "T", username: "alice", env: { KERNEL_IMAGE: "x" } },
      { url: "http://b:8888/base", kernel_name: "py" },
      { T: "tok", JUPYTER_TOKEN: "other" },
    );
    expect(resolved).toEqual({
      url: "http://b:8888/base/", token: "tok", tokenEnv: "T", kernelName: "py", username: "alice",
      env: { KERNEL_IMAGE: "x", KERNEL_USERNAME: "alice" },
    });
    expect(resolveRemoteKernel(undefined, undefined, {})).toBeUndefined();
    expect(resolveRemoteKernel(undefined, { url: "http://h" }, { JUPYTER_TOKEN: "j" })).toMatchObject({ token: "j", tokenEnv: "JUPYTER_TOKEN", kernelName: "python3" });
    expect(() => resolveRemoteKernel(undefined, { url: "ftp://h" }, {})).toThrow(RemoteSettingsError);
  });
});

describe("K-12 kernel-side pacing under the iopub rate limit", () => {
  it("lets no 3 s window hold more messages than the server forwards, whatever the burst", async () => {
    // Reserve 5,000 sends at once and replay their send times: the busiest 3 s window must stay under 1000/s.
    const code = [
      "import sys; sys.path.insert(0, 'kernel')",
      "from albedo._comm import Pacer",
      `pacer = Pacer(${REMOTE_PACE_PER_S}, ${REMOTE_PACE_BURST})`,
      "import bisect, time",
      "start = time.monotonic()",
      "times = sorted(time.monotonic() + pacer.reserve() - start for _ in range(5000))",
      `print(max(bisect.bisect_left(times, t + ${SERVER_RATE_WINDOW_S}) - i for i, t in enumerate(times)), round(times[-1], 2))`,
    ].join("\n");
    const result = await runPython(code, {});
    const [busiest, last] = result.stdout.trim().split(" ").map(Number);
    // Send times in [t, t + 3 s): the burst, plus what the bucket refills in 3 s (one more for rounding).
    expect(busiest).toBeLessThanOrEqual(REMOTE_PACE_BURST + SERVER_RATE_WINDOW_S * REMOTE_PACE_PER_S + 1);
    expect(busiest).toBeLessThan(SERVER_MSG_RATE_LIMIT * SERVER_RATE_WINDOW_S);
    // Every call of the burst leaves within its deadline (65 s for a session) and then some.
    expect(last).toBeLessThan((5_000 - REMOTE_PACE_BURST) / REMOTE_PACE_PER_S + 1);
  });
});
