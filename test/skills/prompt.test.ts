import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { humanSize, renderInstructions, renderSkillsPrompt } from "../../src/skills/prompt.js";
import { discoverCatalog } from "../../src/skills/snapshot.js";
import { layout, writeFile } from "./fixtures.js";
import { roots, skillText, writeSkill } from "../support/skills.js";
import { tempDirs } from "../support/tempDirs.js";
import { skillCommandName } from "../../src/commands/index.js";

const temps = tempDirs("albedo-skills-");
afterEach(() => temps.cleanup());

describe("O-4 S-8 catalog block", () => {
  it("lists name, one-line description, size, command and source, XML-escaped", async () => {
    const t = layout(temps.make());
    const text = skillText("pdf-processing", { description: ">\n  Fill <forms> & merge\n  \"PDF\" files", body: "x".repeat(3100) });
    writeSkill(roots.wsAlbedo(t.workspace), "pdf-processing", text);
    writeSkill(roots.wsAlbedo(t.workspace), "status");
    const snapshot = await discoverCatalog(t);
    const size = humanSize(Buffer.byteLength(text));
    expect(size).toBe("3.1 KB");
    expect(renderSkillsPrompt(snapshot, skillCommandName)).toBe(
      [
        "<available_skills>",
        "<skill>",
        "<name>pdf-processing</name>",
        "<description>Fill &lt;forms&gt; &amp; merge &quot;PDF&quot; files</description>",
        "<size>3.1 KB</size>",
        "<command>/pdf-processing</command>",
        `<location>${join(roots.wsAlbedo(t.workspace), "pdf-processing", "SKILL.md")}</location>`,
        "</skill>",
        "<skill>",
        "<name>status</name>",
        "<description>The status skill.</description>",
        `<size>${humanSize(Buffer.byteLength(skillText("status")))}</size>`,
        "<command>/skill:status</command>",
        `<location>${join(roots.wsAlbedo(t.workspace), "status", "SKILL.md")}</location>`,
        "</skill>",
        "</available_skills>",
        "",
      ].join("\n"),
    );
  });

  it("is absent (empty string), not an empty block, when there are no skills", async () => {
    expect(renderSkillsPrompt(await discoverCatalog(layout(temps.make())), skillCommandName)).toBe("");
  });

  it("never includes the body or optional fields", async () => {
    const t = layout(temps.make());
    writeSkill(roots.wsAlbedo(t.workspace), "quiet", { description: "d", frontmatter: "license: SECRET-LICENSE\n", body: "BODY-MARKER\n" });
    const block = renderSkillsPrompt(await discoverCatalog(t), skillCommandName);
    expect(block).toContain("<name>quiet</name>");
    expect(block).not.toContain("BODY-MARKER");
    expect(block).not.toContain("SECRET-LICENSE");
  });

  it("humanSize formats bytes, KB and MB", () => {
    expect([humanSize(0), humanSize(1023), humanSize(1024), humanSize(3174), humanSize(5 * 1024 * 1024)]).toEqual(["0 B", "1023 B", "1.0 KB", "3.1 KB", "5.0 MB"]);
  });
});

describe("O-4 S-8 S-11 B the block a model receives carries no control characters", () => {
  it("shows escapes in a description and an instruction file visibly; instruction lines and tabs stay, CRLF becomes LF", async () => {
    const t = layout(temps.make());
    writeSkill(roots.wsAlbedo(t.workspace), "evil", { description: String.raw`"Evil \x1b]0;pwned\x07 \x9b2J \x7f"` });
    writeFile(join(t.workspace, "AGENTS.md"), "Orders:\r\n\tone \x1b[2J\r\n\x07two\n");
    const snapshot = await discoverCatalog(t);
    expect(renderSkillsPrompt(snapshot, skillCommandName)).toContain("<description>Evil ␛]0;pwned␇ \\u009b2J ␡</description>");
    expect(renderInstructions(snapshot)).toBe(`<instructions scope="workspace" path="${join(t.workspace, "AGENTS.md")}">\nOrders:\n\tone ␛[2J\n␇two\n</instructions>\n`);
  });
});
