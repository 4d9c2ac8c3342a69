/**
 * Images over the daemon's HTTP API (I-3): an execute answer names the images the cell showed,
 * kept once by content in the state dir, and GET /sessions/{id}/images/{image_id} serves their
 * bytes to the token's holder only for ids that session kept. A real daemon, a real (sandboxed)
 * kernel, real files.
 */
import { readFileSync, statSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { IMAGES_DIR, MAX_IMAGE_EDGE_PX, MAX_IMAGES_PER_EXECUTION } from "../../src/images/index.js";
import { blackPng, paddedPng, picture } from "../images/fixtures.js";
import { call } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";

const fixture = daemonFixture();

/** Python that shows the base64 in workspace file `name` as a raw `mime` bundle. */
const show = (name: string, mime = "image/png") => `display({${JSON.stringify(mime)}: open(${JSON.stringify(name)}).read(), 'text/plain': '<stand-in>'}, raw=True)`;
const PRELUDE = "from IPython.display import display\n";

describe("I-1 B an image between MAX_OUTPUT_MESSAGE_BYTES and MAX_IMAGE_BYTES is judged whole, before any cut", () => {
  it("a PNG of 3 MiB is kept and scaled to MAX_IMAGE_EDGE_PX; one of 6 MiB is dropped with a note naming MAX_IMAGE_BYTES", { timeout: 120_000 }, async () => {
    const dirs = fixture.dirs;
    const plot = await picture(2400, 1200);
    await writeFile(join(dirs.workspace, "three.b64"), paddedPng(plot, 3 * 1024 * 1024).toString("base64"));
    await writeFile(join(dirs.workspace, "six.b64"), paddedPng(plot, 6 * 1024 * 1024).toString("base64"));
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const sid = (await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body.id as string;
    const shown = await call(daemon, "POST", `/sessions/${sid}/execute`, { code: `${PRELUDE}${show("three.b64")}
${show("six.b64")}` });
    expect(shown.status).toBe(200);
    expect(shown.body.images).toHaveLength(1);
    expect(shown.body.images[0]).toMatchObject({ mime: "image/png", width: MAX_IMAGE_EDGE_PX, height: MAX_IMAGE_EDGE_PX / 2 });
    expect(shown.body.image_notes).toEqual(["image 2 of 2 dropped: 6.0 MB is over MAX_IMAGE_BYTES (5.0 MB)"]);
  });
});

describe("I-3 the daemon keeps and serves a cell's images", () => {
  it("an execute answer names each kept image with its url; GET returns the exact bytes, typed, nosniff, immutable; bad images are notes; ids that are paths, upper case or another session's are 404", async () => {
    const dirs = fixture.dirs;
    const plot = await picture(640, 480);
    const files: Record<string, Buffer> = {
      "plot.b64": plot,
      "badsig.b64": Buffer.concat([Buffer.from("NOTAPNG!"), plot.subarray(8)]),
      "truncated.b64": plot.subarray(0, Math.floor(plot.length / 2)),
      "bomb.b64": await blackPng(30_000, 30_000),
    };
    for (const [name, bytes] of Object.entries(files)) await writeFile(join(dirs.workspace, name), bytes.toString("base64"));
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const open = async () => (await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body.id as string;
    const sid = await open();

    const shown = await call(daemon, "POST", `/sessions/${sid}/execute`, { code: `${PRELUDE}${show("plot.b64")}\nprint('drawn')` });
    expect(shown.status).toBe(200);
    expect(shown.body.image_notes).toEqual([]);
    expect(shown.body.images).toHaveLength(1);
    const image = shown.body.images[0];
    expect(image).toMatchObject({ mime: "image/png", width: 640, height: 480, bytes: plot.length, url: `/sessions/${sid}/images/${image.id}` });
    // The outputs are as they were: the bundle's data is still there.
    expect(shown.body.outputs.some((output: { content: { data?: Record<string, string> } }) => output.content.data?.["image/png"] !== undefined)).toBe(true);

    const file = join(dirs.state, IMAGES_DIR, `${image.id}.png`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file).equals(plot)).toBe(true);

    const got = await fetch(daemon.url + image.url, { headers: { authorization: `Bearer ${daemon.token}` } });
    expect(got.status).toBe(200);
    expect(got.headers.get("content-type")).toBe("image/png");
    expect(got.headers.get("x-content-type-options")).toBe("nosniff");
    expect(got.headers.get("cache-control")).toBe("private, max-age=31536000, immutable");
    expect(Number(got.headers.get("content-length"))).toBe(plot.length);
    expect(Buffer.from(await got.arrayBuffer()).equals(plot)).toBe(true);
    // The token is needed, as for every route.
    expect((await fetch(daemon.url + image.url)).status).toBe(401);

    // Bad images are notes, never references.
    const bad = await call(daemon, "POST", `/sessions/${sid}/execute`, {
      code: `${PRELUDE}${[show("badsig.b64"), show("truncated.b64"), show("bomb.b64"), `display({'image/svg+xml': '<svg xmlns="http://www.w3.org/2000/svg"/>'}, raw=True)`].join("\n")}`,
    });
    expect(bad.body.images).toEqual([]);
    expect(bad.body.image_notes).toEqual([
      expect.stringMatching(/^image 1 of 4 dropped: bad magic bytes/),
      expect.stringMatching(/^image 2 of 4 dropped: .*(truncated|corrupt)/),
      expect.stringMatching(/^image 3 of 4 dropped: a decompression bomb/),
      expect.stringMatching(/^image 4 of 4 dropped: SVG is not kept/),
    ]);

    // 100 images: the first MAX_IMAGES_PER_EXECUTION, kept once by content, and one note for the rest.
    const many = await call(daemon, "POST", `/sessions/${sid}/execute`, { code: `${PRELUDE}for _ in range(100):\n    ${show("plot.b64")}` });
    expect(many.body.images).toHaveLength(MAX_IMAGES_PER_EXECUTION);
    expect(new Set(many.body.images.map((each: { id: string }) => each.id))).toEqual(new Set([image.id]));
    expect(many.body.image_notes).toEqual([`images ${MAX_IMAGES_PER_EXECUTION + 1}–100 of 100 dropped: MAX_IMAGES_PER_EXECUTION is ${MAX_IMAGES_PER_EXECUTION}`]);

    // Ids that are not this session's image: 404, never bytes.
    const other = await open();
    const notFound = async (path: string) => {
      const answer = await call(daemon, "GET", path);
      expect(answer.status, path).toBe(404);
      expect(answer.headers.get("content-type"), path).toMatch(/problem\+json/);
    };
    await notFound(`/sessions/${other}/images/${image.id}`);
    await notFound(`/sessions/${sid}/images/${image.id.toUpperCase()}`);
    await notFound(`/sessions/${sid}/images/..%2F..%2Fsettings.json`);
    await notFound(`/sessions/${sid}/images/${"0".repeat(64)}`);
    await notFound(`/sessions/nosuchsession/images/${image.id}`);
    const traversal = await fetch(`${daemon.url}/sessions/${sid}/images/../../daemon.token`, { headers: { authorization: `Bearer ${daemon.token}` } });
    expect(traversal.status).toBe(404);
    expect(await traversal.text()).not.toContain(daemon.token);
  }, 180_000);
});
