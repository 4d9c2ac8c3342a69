import { describe, expect, it } from "vitest";
import { checkNetworkSetting, compilePolicy, NetworkSettingSchema, PRESETS, type NetworkSetting } from "../../src/network/index.js";
import { parseHost, parsePattern } from "../../src/network/patterns.js";
import { denialLine } from "../../src/network/policy.js";
import { MAX_PATTERN_LENGTH, MAX_PATTERNS, MAX_SECRET_HEADERS } from "../../src/network/limits.js";

describe("N-1 patterns: host names, wildcards, IP literals, ports", () => {
  it.each([
    ["api.github.com", { kind: "name", host: "api.github.com" }],
    ["API.GitHub.com.", { kind: "name", host: "api.github.com" }],
    ["pypi.org:8443", { kind: "name", host: "pypi.org", port: 8443 }],
    ["*.githubusercontent.com", { kind: "subdomains", host: "githubusercontent.com" }],
    ["*.example.org:22", { kind: "subdomains", host: "example.org", port: 22 }],
    ["bücher.example", { kind: "name", host: "xn--bcher-kva.example" }],
    ["10.0.0.5", { kind: "address", host: "10.0.0.5" }],
    ["10.0.0.5:8080", { kind: "address", host: "10.0.0.5", port: 8080 }],
    ["127.1", { kind: "address", host: "127.0.0.1" }],
    ["::1", { kind: "address", host: "::1" }],
    ["[::1]", { kind: "address", host: "::1" }],
    ["[::1]:8080", { kind: "address", host: "::1", port: 8080 }],
    ["::FFFF:127.0.0.1", { kind: "address", host: "::ffff:127.0.0.1" }],
    ["localhost", { kind: "name", host: "localhost" }],
    ["under_score.example", { kind: "name", host: "under_score.example" }],
  ])("%s", (text, expected) => {
    expect(parsePattern(text)).toEqual({ text, ...expected });
  });

  it.each([
    ["", "is not a host name"],
    ["*", "not a leading *."],
    ["*.", "not a wildcard pattern"],
    ["a.*.example", "not a leading *."],
    ["*.10.0.0.1", "not a wildcard pattern"],
    ["exa mple.com", "is not a host name"],
    ["-bad.example", "is not a host name"],
    ["a..b", "is not a host name"],
    ["pypi.org:0", "has port \"0\""],
    ["pypi.org:65536", "has port \"65536\""],
    ["pypi.org:http", "has port \"http\""],
    ["[::1]:", "has port \"\""],
    ["host.1234", "is not a host name"],
    ["https://pypi.org/simple", "is a URL; write the host alone, as in pypi.org"],
    ["user@pypi.org", "is not a host name"],
    ["a".repeat(MAX_PATTERN_LENGTH + 1), "MAX_PATTERN_LENGTH"],
    [`${"a".repeat(64)}.example`, "is not a host name"],
  ])("refuses %j, saying why", (text, says) => {
    const parsed = parsePattern(text);
    expect(typeof parsed).toBe("string");
    expect(parsed).toContain(says);
  });

  it("reads request hosts as patterns read them", () => {
    expect(parseHost("0x7f.0.0.1")).toMatchObject({ name: "127.0.0.1" });
    expect(parseHost("[::ffff:7f00:1]")).toMatchObject({ name: "::ffff:127.0.0.1" });
    expect(parseHost("PyPI.org.")).toEqual({ name: "pypi.org" });
    expect(parseHost("[pypi.org]")).toBeUndefined();
  });
});

describe("N-1 decisions: allow, deny wins, presets, default ports, internal addresses only by an exact entry", () => {
  const policy = compilePolicy({
    allow: ["pypi.org", "*.githubusercontent.com", "intranet.corp:8443", "db.corp", "10.0.0.5:8080", "[::1]:9000", "gist.github.com"],
    deny: ["evil.githubusercontent.com", "*.github.com:443"],
    presets: ["python-packages", "github"],
  });

  it("allows a listed host on 80 and 443, naming the entry", () => {
    expect(policy.decide("pypi.org", 443)).toEqual({ allowed: true, rule: "network.allow pypi.org", internalAllowed: false });
    expect(policy.decide("PYPI.org.", 80)).toMatchObject({ allowed: true });
    expect(policy.decide("pypi.org", 8080)).toMatchObject({ allowed: false, kind: "not-allowed", reason: "port 8080 is not in network.allow" });
  });

  it("a wildcard covers subdomains at any depth, not the name itself", () => {
    expect(policy.decide("raw.githubusercontent.com", 443)).toMatchObject({ allowed: true, rule: "network.allow *.githubusercontent.com" });
    expect(policy.decide("a.b.githubusercontent.com", 443)).toMatchObject({ allowed: true });
    expect(policy.decide("githubusercontent.com", 443)).toMatchObject({ allowed: false, reason: "not in network.allow" });
    expect(policy.decide("xgithubusercontent.com", 443)).toMatchObject({ allowed: false });
  });

  it("deny wins over allow and presets; a deny entry without a port covers every port", () => {
    expect(policy.decide("evil.githubusercontent.com", 443)).toEqual({
      allowed: false,
      kind: "denied",
      reason: "denied by network.deny evil.githubusercontent.com",
      hint: "remove evil.githubusercontent.com from network.deny to allow it",
    });
    expect(policy.decide("evil.githubusercontent.com", 8080)).toMatchObject({ kind: "denied" });
    expect(policy.decide("gist.github.com", 443)).toMatchObject({ kind: "denied", reason: "denied by network.deny *.github.com:443" });
    expect(policy.decide("gist.github.com", 80)).toMatchObject({ allowed: true, rule: "network.allow gist.github.com" });
  });

  it("presets add their patterns, named in the rule", () => {
    expect(policy.decide("files.pythonhosted.org", 443)).toEqual({ allowed: true, rule: "network.presets python-packages (files.pythonhosted.org)", internalAllowed: false });
    expect(policy.decide("github.com", 443)).toMatchObject({ allowed: true, rule: "network.presets github (github.com)" });
  });

  it("only an allow entry naming the host and its port lets the host be an internal address", () => {
    expect(policy.decide("intranet.corp", 8443)).toEqual({ allowed: true, rule: "network.allow intranet.corp:8443", internalAllowed: true });
    expect(policy.decide("db.corp", 443)).toEqual({ allowed: true, rule: "network.allow db.corp", internalAllowed: false });
    expect(policy.decide("10.0.0.5", 8080)).toMatchObject({ allowed: true, internalAllowed: true });
    expect(policy.decide("::1", 9000)).toMatchObject({ allowed: true, internalAllowed: true });
    expect(policy.decide("[::1]", 9000)).toMatchObject({ allowed: true, internalAllowed: true });
    expect(policy.decide("0:0::1", 9001)).toMatchObject({ allowed: false });
    expect(policy.decide("::ffff:10.0.0.5", 8080)).toMatchObject({ allowed: false });
  });

  it("IP literals, localhost and names of other hosts are not allowed by a name", () => {
    for (const host of ["127.0.0.1", "localhost", "::1", "169.254.169.254", "pypi.org.evil.example", "evilpypi.org"]) {
      expect(policy.decide(host, 443), host).toMatchObject({ allowed: false, kind: "not-allowed" });
    }
  });

  it("false refuses everything, true lets everything through", () => {
    expect(compilePolicy(false).decide("pypi.org", 443)).toEqual({ allowed: false, kind: "off", reason: "network is off", hint: "allow it: albedo network allow pypi.org" });
    expect(compilePolicy(true).decide("10.0.0.1", 22)).toEqual({ allowed: true, rule: "network: true", internalAllowed: true });
    expect([compilePolicy(false).mode, compilePolicy(true).mode, policy.mode]).toEqual(["off", "open", "policy"]);
  });

  it("the 403 line names the host, the setting and how to allow it", () => {
    const host = parseHost("pypi.org")!;
    const decision = compilePolicy({ allow: [] }).decide(host, 443);
    if (decision.allowed) throw new Error("allowed");
    expect(denialLine(host, 443, decision)).toBe("albedo: pypi.org is not allowed (not in network.allow); allow it: albedo network allow pypi.org");
    const other = compilePolicy({}).decide(host, 8443);
    if (other.allowed) throw new Error("allowed");
    expect(denialLine(host, 8443, other)).toBe("albedo: pypi.org:8443 is not allowed (not in network.allow); allow it: albedo network allow pypi.org:8443");
  });

  it("secrets are looked up by host name, never by address or wildcard", () => {
    const withSecrets = compilePolicy({ allow: ["api.example"], secrets: { "API.example": { headers: { Authorization: { from_env: "TOKEN", format: "Bearer {}" }, "X-Key": { from_env: "KEY" } } } } });
    expect(withSecrets.secretsFor("api.example")).toEqual([
      { name: "Authorization", fromEnv: "TOKEN", format: "Bearer {}" },
      { name: "X-Key", fromEnv: "KEY", format: "{}" },
    ]);
    expect(withSecrets.secretsFor("sub.api.example")).toBeUndefined();
    expect(compilePolicy(true).secretsFor("api.example")).toBeUndefined();
  });
});

describe("N-1 the network setting's schema: every problem names its path and the value", () => {
  const problems = (value: unknown) => {
    const checked = checkNetworkSetting(value);
    return checked.ok ? [] : checked.problems;
  };

  it("accepts false, true and a full policy as given", () => {
    const policy: NetworkSetting = {
      allow: ["pypi.org", "*.hf.co:443"],
      deny: ["evil.example"],
      presets: PRESETS.map((preset) => preset.name),
      secrets: { "api.github.com": { headers: { Authorization: { from_env: "GITHUB_TOKEN", format: "Bearer {}" } } } },
      upstream_ca: "/etc/ssl/internal.pem",
    };
    for (const value of [false, true, {}, policy]) expect(checkNetworkSetting(value)).toEqual({ ok: true, setting: value });
    expect(NetworkSettingSchema.safeParse(policy).success).toBe(true);
  });

  it("names what is wrong where", () => {
    expect(problems("yes")).toEqual([{ path: "", message: 'must be false, true or a policy object {"allow", "deny", "presets", "secrets", "upstream_ca"}, got "yes"' }]);
    expect(problems({ allow: ["ok.example", "bad host"], alow: [] })).toEqual([
      { path: "allow[1]", message: '"bad host" is not a host name or IP address (with an optional :PORT, [IPv6]:PORT for an IPv6 address)' },
      { path: "alow", message: "unknown field; network allows allow, deny, presets, secrets, upstream_ca" },
    ]);
    expect(problems({ deny: "evil.example" })).toEqual([{ path: "deny", message: 'must be a list of patterns, got "evil.example"' }]);
    expect(problems({ presets: ["pip"] })).toEqual([{ path: "presets[0]", message: 'unknown preset "pip"; the presets are python-packages, github, huggingface, npm' }]);
    expect(problems({ upstream_ca: "ca.pem" })).toEqual([{ path: "upstream_ca", message: 'must be an absolute path, got "ca.pem"' }]);
    expect(problems({ allow: new Array(MAX_PATTERNS + 1).fill("a.example") })).toEqual([{ path: "allow", message: `lists ${MAX_PATTERNS + 1} patterns; at most ${MAX_PATTERNS} are allowed` }]);
  });

  it("checks secrets: host names, header names, variables, formats", () => {
    const header = (value: unknown) => ({ secrets: { "api.example": { headers: value } } });
    expect(problems({ secrets: { "*.example": { headers: {} }, "10.0.0.1": { headers: {} } } })).toEqual([
      { path: "secrets.*.example", message: '"*.example" is not a host name (secrets are added by name: no wildcard, port or IP address)' },
      { path: "secrets.10.0.0.1", message: '"10.0.0.1" is not a host name (secrets are added by name: no wildcard, port or IP address)' },
    ]);
    expect(problems({ secrets: { "api.example": { headers: {}, extra: 1 } } })).toEqual([{ path: "secrets.api.example.extra", message: "unknown field; a secrets host allows headers" }]);
    expect(problems(header({ "Bad Name": { from_env: "T" } }))).toMatchObject([{ path: "secrets.api.example.headers.Bad Name", message: expect.stringContaining('"Bad Name" is not a header name') }]);
    expect(problems(header({ Host: { from_env: "T" } }))).toEqual([{ path: "secrets.api.example.headers.Host", message: '"Host" is a header the proxy sets itself' }]);
    expect(problems(header({ "X-A": { from_env: "A" }, "x-a": { from_env: "B" } }))).toEqual([{ path: "secrets.api.example.headers.x-a", message: '"x-a" is named twice (header names ignore case)' }]);
    expect(problems(header({ Authorization: { from_env: "1TOKEN" } }))).toEqual([
      { path: "secrets.api.example.headers.Authorization.from_env", message: 'must be a variable name (letters, digits and _, not starting with a digit), got "1TOKEN"' },
    ]);
    expect(problems(header({ Authorization: { from_env: "T", format: "Bearer" } }))).toEqual([
      { path: "secrets.api.example.headers.Authorization.format", message: 'must hold {} (where the value goes) exactly once, got "Bearer"' },
    ]);
    expect(problems(header({ Authorization: { from_env: "T", format: "{}\r\nX: {}" } }))).toMatchObject([{ path: "secrets.api.example.headers.Authorization.format" }]);
    expect(problems(header({ Authorization: { value: "sk-123" } }))).toEqual([
      { path: "secrets.api.example.headers.Authorization.from_env", message: "must name a host environment variable, got nothing" },
      { path: "secrets.api.example.headers.Authorization.value", message: "unknown field; a secret header allows from_env, format" },
    ]);
    const many = Object.fromEntries(Array.from({ length: MAX_SECRET_HEADERS + 1 }, (_, index) => [`X-${index}`, { from_env: "T" }]));
    expect(problems(header(many))).toEqual([{ path: "secrets.api.example.headers", message: `names ${MAX_SECRET_HEADERS + 1} headers; at most ${MAX_SECRET_HEADERS} (MAX_SECRET_HEADERS)` }]);
  });
});
