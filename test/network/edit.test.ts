import { describe, expect, it } from "vitest";
import { describeNetwork, editNetworkSetting, NetworkEditError } from "../../src/network/index.js";

describe("N-1 allow and deny edit a network setting as albedo network and the session route do", () => {
  it("turns false into a policy, moves a pattern between the lists, keeps the other fields", () => {
    expect(editNetworkSetting(false, { allow: ["pypi.org"] })).toEqual({ allow: ["pypi.org"] });
    const base = { allow: ["pypi.org", "github.com"], presets: ["npm"], secrets: { "api.example.com": { headers: { Authorization: { from_env: "TOKEN" } } } } };
    expect(editNetworkSetting(base, { deny: ["github.com"] })).toEqual({ ...base, allow: ["pypi.org"], deny: ["github.com"] });
    expect(editNetworkSetting({ deny: ["x.example"] }, { allow: ["x.example", "x.example"] })).toEqual({ allow: ["x.example"] });
    expect(editNetworkSetting(base, {})).toBe(base);
  });

  it("refuses a URL, an edit of true, and a list past its bound, naming what is wrong", () => {
    expect(() => editNetworkSetting(false, { allow: ["https://pypi.org/simple"] })).toThrow(/is a URL; write the host alone, as in pypi.org/);
    expect(() => editNetworkSetting(true, { allow: ["pypi.org"] })).toThrow(NetworkEditError);
    const full = { allow: Array.from({ length: 512 }, (_, i) => `h${i}.example`) };
    expect(() => editNetworkSetting(full, { allow: ["one-more.example"] })).toThrow(/network\.allow: lists 513 patterns; at most 512/);
  });

  it("says what a setting lets through in one line", () => {
    expect(describeNetwork(false)).toBe("off (no host is reachable)");
    expect(describeNetwork({ allow: ["pypi.org"], presets: ["github"] })).toBe("a policy of 6 hosts");
    expect(describeNetwork({ allow: ["api.example.com"], secrets: { "api.example.com": { headers: { A: { from_env: "T" } } } } })).toBe("a policy of 1 host, 1 with secrets");
    expect(describeNetwork(true)).toBe("open (the host's network, unfiltered: unsafe for model-written code)");
  });
});
