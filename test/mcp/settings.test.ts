/**
 * The `mcp` settings section (M-1): its shape, its error messages by field path, the keys other
 * clients write that a pasted entry may carry, and that the session scope refuses it.
 */
import { describe, expect, it } from "vitest";
import { MAX_MCP_SERVERS } from "../../src/mcp/index.js";
import { validateSettings, type SettingsProblem, type SettingsScope } from "../../src/settings/index.js";
import { REPLACED_SETTINGS, SettingsPatchBody } from "../../src/api/bodies.js";

function problems(mcp: unknown, scope: SettingsScope = "global"): readonly SettingsProblem[] {
  const result = validateSettings({ mcp }, scope);
  return result.ok ? [] : result.problems;
}

const servers = (entries: Record<string, unknown>) => ({ servers: entries });

describe("M-1 the mcp settings section", () => {
  it("takes a stdio entry and a Streamable HTTP entry with every optional key", () => {
    expect(
      problems(
        servers({
          github: {
            command: "npx",
            args: ["-y", "@modelcontextprotocol/server-github"],
            env: { GITHUB_TOKEN: { from_env: "GH_TOKEN" }, LOG: "debug" },
            cwd: "tools",
            enabled: true,
            shared: true,
            tools: { allow: ["search_*"], deny: ["*delete*"] },
            call_timeout_ms: 5000,
            startup_timeout_ms: 2000,
          },
          remote: { url: "https://mcp.example.com/mcp", headers: { Authorization: { from_env: "REMOTE_TOKEN" } } },
        }),
      ),
    ).toEqual([]);
  });

  it("accepts an entry pasted from Claude Code, Cursor or Claude Desktop (type, disabled, autoApprove, alwaysAllow)", () => {
    expect(problems(servers({ a: { type: "stdio", command: "x", disabled: false, autoApprove: ["t"] }, b: { type: "http", url: "http://127.0.0.1:1/mcp", alwaysAllow: [] } }))).toEqual([]);
    expect(problems(servers({ c: { type: "streamable-http", url: "http://127.0.0.1:1/mcp" } }))).toEqual([]);
  });

  it("names the field path of each problem", () => {
    const found = problems(
      servers({
        gh: { command: "x", env: { "BAD-NAME": "v", OK: { from_env: "1X" } }, args: "not a list", timeout: 5 },
        web: { url: "ftp://host/mcp", headers: { Host: "h", "X-A": "a\r\nb" } },
      }),
    );
    const byPath = Object.fromEntries(found.map((problem) => [problem.path, problem.message]));
    expect(byPath["mcp.servers.gh.env.BAD-NAME"]).toMatch(/must name an environment variable/);
    expect(byPath["mcp.servers.gh.env.OK.from_env"]).toMatch(/must name an environment variable/);
    expect(byPath["mcp.servers.gh.args"]).toMatch(/must be a list of strings/);
    expect(byPath["mcp.servers.gh.timeout"]).toMatch(/unknown field; a stdio server entry allows command, args, env, cwd/);
    expect(byPath["mcp.servers.web.url"]).toMatch(/must be an http or https URL, not ftp:/);
    expect(byPath["mcp.servers.web.headers.Host"]).toMatch(/set by the transport itself/);
    expect(byPath["mcp.servers.web.headers.X-A"]).toMatch(/must not contain CR, LF or NUL/);
  });

  it("refuses credentials in a URL, an entry that is neither or both kinds, SSE, and contradicting enabled/disabled", () => {
    expect(problems(servers({ a: { url: "https://user:pw@host/mcp" } }))).toEqual([{ path: "mcp.servers.a.url", message: expect.stringMatching(/must not carry a user name or password/) }]);
    expect(problems(servers({ a: {} }))[0]).toEqual({ path: "mcp.servers.a", message: expect.stringMatching(/must have command .* or url/) });
    expect(problems(servers({ a: { command: "x", url: "http://h/" } }))[0]!.message).toMatch(/not both/);
    expect(problems(servers({ a: { type: "sse", url: "http://h/sse" } }))[0]!.message).toMatch(/SSE transport is not supported/);
    expect(problems(servers({ a: { type: "http", command: "x" } }))[0]).toEqual({ path: "mcp.servers.a.type", message: expect.stringMatching(/must be "stdio"/) });
    expect(problems(servers({ a: { command: "x", enabled: true, disabled: true } }))[0]).toEqual({ path: "mcp.servers.a.disabled", message: expect.stringMatching(/contradicts enabled/) });
  });

  it("holds server names to the skill-name rule and timeouts to their range", () => {
    const found = problems(servers({ GitHub: { command: "x" }, "a--b": { command: "x" }, ok: { command: "x", call_timeout_ms: 1 } }));
    expect(found).toEqual(
      expect.arrayContaining([
        { path: "mcp.servers.GitHub", message: expect.stringMatching(/server name "GitHub" must be lowercase/) },
        { path: "mcp.servers.a--b", message: expect.stringMatching(/two hyphens in a row/) },
        { path: "mcp.servers.ok.call_timeout_ms", message: expect.stringMatching(/must be an integer from 100 to/) },
      ]),
    );
  });

  it(`B refuses more than MAX_MCP_SERVERS (${MAX_MCP_SERVERS}) servers, naming the bound`, () => {
    const many = Object.fromEntries(Array.from({ length: MAX_MCP_SERVERS + 1 }, (_, i) => [`s${i}`, { command: "x" }]));
    expect(problems(servers(many))).toEqual([{ path: "mcp.servers", message: `configures ${MAX_MCP_SERVERS + 1} servers; at most ${MAX_MCP_SERVERS} (MAX_MCP_SERVERS)` }]);
  });

  it("refuses unknown keys in the section and in tools", () => {
    expect(problems({ server: {} })).toEqual([{ path: "mcp.server", message: "unknown field; mcp allows servers" }]);
    expect(problems(servers({ a: { command: "x", tools: { only: [] } } }))).toEqual([{ path: "mcp.servers.a.tools.only", message: "unknown field; tools allows allow, deny" }]);
  });

  it("is refused in the session scope, which a kernel's turn can reach", () => {
    expect(problems(servers({ a: { command: "x" } }), "session")).toEqual([{ path: "mcp", message: expect.stringMatching(/not per session/) }]);
    expect(problems(servers({ a: { command: "x" } }), "project")).toEqual([]);
  });

  it("is a section PATCH /settings replaces whole (null removes it)", () => {
    expect(REPLACED_SETTINGS).toContain("mcp");
    expect(SettingsPatchBody.safeParse({ scope: "global", mcp: servers({ a: { command: "x" } }) }).success).toBe(true);
    expect(SettingsPatchBody.safeParse({ scope: "global", mcp: null }).success).toBe(true);
    const bad = SettingsPatchBody.safeParse({ scope: "global", mcp: servers({ a: { command: "" } }) });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0]!.path).toEqual(["mcp", "servers", "a", "command"]);
  });
});
