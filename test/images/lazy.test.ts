import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const IMAGES = join(import.meta.dirname, "..", "..", "dist", "src", "images", "index.js");

/** Whether libvips is mapped into a fresh process that imports the images domain and then runs `then`. */
async function libvipsMapped(then: string): Promise<{ before: boolean; after: boolean }> {
  const script = `
    import { readFileSync } from "node:fs";
    const mapped = () => readFileSync("/proc/self/maps", "utf8").includes("libvips");
    const images = await import(${JSON.stringify(IMAGES)});
    const before = mapped();
    ${then}
    process.stdout.write(JSON.stringify({ before, after: mapped() }));
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script]);
  return JSON.parse(stdout) as { before: boolean; after: boolean };
}

describe("I-1 sharp loads with the first image, not with the module", () => {
  it("importing the images domain and collecting outputs with no image leave libvips unloaded; checking an image loads it", async () => {
    expect(await libvipsMapped("await images.collectImages([{ data: { 'text/plain': 'x' } }]);")).toEqual({ before: false, after: false });
    expect(await libvipsMapped("await images.checkImage('image/png', 'iVBORw0KGgo=');")).toEqual({ before: false, after: true });
  });
});
