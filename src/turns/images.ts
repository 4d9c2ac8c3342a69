/**
 * A cell's images on their way to the model (I-2). Chat completions carry text only in tool
 * messages, so a `python` result says how many images follow and one user message after the
 * step's tool results carries them. What a request sends is bounded to the newest
 * MAX_IMAGES_IN_CONTEXT; with `model.images: false`, or once the endpoint refused images in this
 * session, every image is replaced by a note.
 */
import type { CheckedImage } from "../images/index.js";
import { imageLabel } from "../images/index.js";
import { IMAGES_OF_CALL_PREFIX, isModelError, type ChatMessage, type MessageImage } from "../model/index.js";
import { MAX_IMAGES_IN_CONTEXT } from "./limits.js";

type UserMessage = Extract<ChatMessage, { role: "user" }>;

/** What a session remembers about images across its turns: that the endpoint refused them, and its words. */
export class ImageRefusal {
  /** The endpoint's refusal, once one came; from then on the session sends notes. */
  reason: string | undefined;
}

/** The line a tool result ends with when its images go in the next message. */
export function imagesFollowLine(count: number): string {
  return count === 1 ? "1 image follows in the next message." : `${count} images follow in the next message.`;
}

/** The user message that carries the images of one step's calls, each call's labelled; undefined when none had any. */
export function imagesMessage(calls: readonly { readonly callId: string; readonly images: readonly CheckedImage[] }[]): ChatMessage | undefined {
  const shown = calls.filter((call) => call.images.length > 0);
  if (shown.length === 0) return undefined;
  const lines = shown.map((call) => `${IMAGES_OF_CALL_PREFIX}${call.callId}: ${call.images.map((image, index) => imageLabel(index + 1, image)).join(" ")}`);
  const images: MessageImage[] = shown.flatMap((call) =>
    call.images.map((image) => ({ mime: image.mime, data: image.bytes.toString("base64"), width: image.width, height: image.height })),
  );
  return { role: "user", content: lines.join("\n"), images };
}

/** How many images `messages` carry. */
export function imageCount(messages: readonly ChatMessage[]): number {
  return messages.reduce((count, message) => count + (message.role === "user" ? (message.images?.length ?? 0) : 0), 0);
}

/**
 * The groups (earlier turns, then the current one) with at most `max` images, the newest kept;
 * an older image's message keeps its text and says the images are no longer sent. Unchanged
 * groups are returned as they are.
 */
export function keepNewestImages(groups: readonly (readonly ChatMessage[])[], max = MAX_IMAGES_IN_CONTEXT): (readonly ChatMessage[])[] {
  let room = max;
  const kept: (readonly ChatMessage[])[] = [];
  for (const group of [...groups].reverse()) {
    let changed = false;
    const messages = [...group].reverse().map((message) => {
      if (message.role !== "user" || message.images === undefined || message.images.length === 0) return message;
      if (message.images.length <= room) {
        room -= message.images.length;
        return message;
      }
      changed = true;
      const stays = message.images.slice(message.images.length - room);
      const dropped = message.images.length - stays.length;
      room = 0;
      const note = `[${dropped === 1 ? "1 image" : `${dropped} images`} of this message no longer sent: a request carries only the newest MAX_IMAGES_IN_CONTEXT (${max}) images of the conversation]`;
      return withImages(message, stays, note);
    });
    kept.push(changed ? messages.reverse() : group);
  }
  return kept.reverse();
}

/** `messages` with every image replaced by a note giving `why`. */
export function withoutImages(messages: readonly ChatMessage[], why: string): ChatMessage[] {
  return messages.map((message) => {
    if (message.role !== "user" || message.images === undefined || message.images.length === 0) return message;
    const count = message.images.length;
    return withImages(message, [], `[${count === 1 ? "1 image" : `${count} images`} not sent: ${why}]`);
  });
}

function withImages(message: UserMessage, images: readonly MessageImage[], note: string): UserMessage {
  const content = `${message.content}\n${note}`;
  return images.length > 0 ? { role: "user", content, images } : { role: "user", content };
}

/** True when `error` is the endpoint refusing images: a 4xx whose words name images. */
export function refusesImages(error: unknown): boolean {
  if (!isModelError(error, "http") || error.status === undefined || error.status < 400 || error.status >= 500) return false;
  return /image|vision|multimodal|image_url/i.test(error.serverText ?? "");
}
