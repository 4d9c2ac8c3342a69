import { it } from "vitest";
import sharp from "sharp";
import { checkImage } from "../../src/images/index.js";
import { blackPng } from "./fixtures.js";
it("x", async () => {
  const bomb = await blackPng(30_000, 30_000);
  console.log(bomb.length, await checkImage("image/png", bomb));
  try { console.log(await sharp(bomb).metadata()); } catch (e) { console.log("meta err", (e as Error).message); }
}, 60000);
