/**
 * A cell's images on their way to the model (I-2). A `python` result carries them as the model
 * domain's ResultImages, which each adapter places as its wire wants (chat completions: a user
 * message after the step's tool results; Anthropic: inside the tool_result), and its text says how
 * many follow. The conversation keeps references to the session's image store; a request reads
 * their bytes as it is built. What a request sends is bounded to the newest MAX_IMAGES_IN_CONTEXT;
 * with `model.images: false`, or once the endpoint refused images in this session, every image is
 * replaced by a note.
 */
import { imageLabel, type CheckedImage, type ImageRef, type ImageStore } from "../images/index.js";
import { isModelError, type ChatMessage, type MessageImage, type ResultImages } from "../model/index.js";
import type { ConversationImage, ConversationMessage } from "./conversation.js";
import { MAX_IMAGES_IN_CONTEXT } from "./limits.js";

/** What a session remembers about images across its turns: that the endpoint refused them, and its words. */
export class ImageRefusal {
  /** The endpoint's refusal, once one came; from then on the session sends notes. */
  reason: string | undefined;
}

/** The line a tool result ends with when its images go in the next message. */
export function imagesFollowLine(count: number): string {
  return count === 1 ? "1 image follows in the next message." : `${count} images follow in the next message.`;
}

/**
 * The images of a result that showed `images`: each by its reference when the store kept it
 * (`kept`, keepAll's `each`), else its bytes, so the model still receives an image the store
 * refused (its quota) as it did when it was shown. `bytes` holds the base64 of those kept, by id:
 * the turn's next request sends them from there instead of reading them back from the store.
 */
export function resultImages(images: readonly CheckedImage[], kept: readonly (ImageRef | undefined)[]): { images: ResultImages<ConversationImage>; bytes: Map<string, string> } {
  const bytes = new Map<string, string>();
  const sent = images.map((image, index): ConversationImage => {
    const data = image.bytes.toString("base64");
    const ref = kept[index];
    if (ref === undefined) return { mime: image.mime, data, width: image.width, height: image.height };
    bytes.set(ref.id, data);
    return ref;
  });
  return { images: { labels: images.map((image, index) => imageLabel(index + 1, image)), sent }, bytes };
}

/** The images `message` carries: a user message's own, a tool result's still sent. */
function imagesOf<I>(message: ChatMessage<I>): readonly I[] {
  if (message.role === "user") return message.images ?? [];
  return message.role === "tool" ? (message.images?.sent ?? []) : [];
}

/** How many images `messages` carry. */
export function imageCount(messages: readonly ChatMessage<unknown>[]): number {
  return messages.reduce((count, message) => count + imagesOf(message).length, 0);
}

/**
 * The groups (earlier turns, then the current one) with at most `max` images, the newest kept;
 * an older image's message keeps its text and says the images are no longer sent. Unchanged
 * groups are returned as they are.
 */
export function keepNewestImages<I>(groups: readonly (readonly ChatMessage<I>[])[], max = MAX_IMAGES_IN_CONTEXT): (readonly ChatMessage<I>[])[] {
  let room = max;
  const kept: (readonly ChatMessage<I>[])[] = [];
  for (const group of [...groups].reverse()) {
    let changed = false;
    const messages = [...group].reverse().map((message) => {
      const images = imagesOf(message);
      if (images.length <= room) {
        room -= images.length;
        return message;
      }
      changed = true;
      const stays = images.slice(images.length - room);
      const dropped = images.length - stays.length;
      room = 0;
      const note = `[${dropped === 1 ? "1 image" : `${dropped} images`} of this message no longer sent: a request carries only the newest MAX_IMAGES_IN_CONTEXT (${max}) images of the conversation]`;
      return withImages(message, stays, note);
    });
    kept.push(changed ? messages.reverse() : group);
  }
  return kept.reverse();
}

/** `messages` with every image replaced by a note giving `why`. */
export function withoutImages<I>(messages: readonly ChatMessage<I>[], why: string): ChatMessage<I>[] {
  return messages.map((message) => {
    const count = imagesOf(message).length;
    return count === 0 ? message : withImages(message, [], `[${count === 1 ? "1 image" : `${count} images`} not sent: ${why}]`);
  });
}

/**
 * `messages` as a request carries them: each referenced image's bytes read from `store`, or from
 * `cache`, which afterwards holds the base64 of this request's images and no others (a turn's next
 * request sends the same); an image whose file is gone (or a host without a store) becomes a note.
 */
export async function withImageBytes(messages: readonly ConversationMessage[], store: ImageStore | undefined, cache: Map<string, string>): Promise<ChatMessage[]> {
  const used = new Map<string, string>();
  const bytesOf = async (image: ConversationImage): Promise<MessageImage | undefined> => {
    if (!("id" in image)) return image;
    const data = used.get(image.id) ?? cache.get(image.id) ?? (await store?.read(image))?.toString("base64");
    if (data === undefined) return undefined;
    used.set(image.id, data);
    return { mime: image.mime, data, width: image.width, height: image.height };
  };
  const sent: ChatMessage[] = [];
  for (const message of messages) {
    const images = imagesOf(message);
    // A message without images is the same message whatever an image is.
    if (images.length === 0) sent.push(message as ChatMessage);
    else sent.push(withFound(message, await Promise.all(images.map(bytesOf))));
  }
  cache.clear();
  for (const [id, data] of used) cache.set(id, data);
  return sent;
}

function withFound(message: ConversationMessage, found: readonly (MessageImage | undefined)[]): ChatMessage {
  const images = found.filter((image) => image !== undefined);
  const gone = found.length - images.length;
  if (gone === 0) return withImages(message, images);
  return withImages(message, images, `[${gone === 1 ? "1 image" : `${gone} images`} not sent: ${gone === 1 ? "its file is" : "their files are"} no longer in the session's image store]`);
}

/** `message` carrying `images` instead of its own, with `note` said after them when given. */
function withImages<I, J>(message: ChatMessage<I>, images: readonly J[], note?: string): ChatMessage<J> {
  if (message.role === "tool") {
    const own = message.images ?? { labels: [], sent: [] };
    const notes = note === undefined ? own.notes : [...(own.notes ?? []), note];
    return { role: "tool", tool_call_id: message.tool_call_id, content: message.content, images: { labels: own.labels, sent: images, ...(notes === undefined ? {} : { notes }) } };
  }
  if (message.role !== "user") return message;
  const content = note === undefined ? message.content : `${message.content}\n${note}`;
  return images.length > 0 ? { role: "user", content, images } : { role: "user", content };
}

/** True when `error` is the endpoint refusing images: a 4xx whose words name images. */
export function refusesImages(error: unknown): boolean {
  if (!isModelError(error, "http") || error.status === undefined || error.status < 400 || error.status >= 500) return false;
  return /image|vision|multimodal|image_url/i.test(error.serverText ?? "");
}
