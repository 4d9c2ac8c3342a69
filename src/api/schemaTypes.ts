/**
 * TypeScript types for JSON Schemas, the subset zod writes for the HTTP contract: objects,
 * arrays, records, unions, literals, references to named schemas, and the empty schema (any
 * value). Keywords that only bound a value (lengths, ranges, patterns) add nothing to a type and
 * are skipped; any other keyword throws, naming where it stood, so a construct the printer does
 * not know is never written as a type that says less than the schema.
 */

type Schema = Readonly<Record<string, unknown>>;

/** Keywords that narrow a value without changing its TypeScript type, or only describe it. */
const SKIPPED = new Set([
  "description", "title", "default", "examples", "format", "pattern", "minLength", "maxLength", "minimum", "maximum",
  "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "propertyNames", "$schema", "$id",
]);
/** Keywords the printer reads. */
const READ = new Set(["$ref", "anyOf", "oneOf", "const", "enum", "type", "properties", "required", "additionalProperties", "items"]);

const INDENT = "  ";

/** The name a `$ref` points to: the last segment of `#/components/schemas/Name`. */
function refName(ref: string): string {
  const name = /^#\/components\/schemas\/([A-Za-z_][A-Za-z0-9_]*)$/.exec(ref)?.[1];
  if (name === undefined) throw new Error(`no TypeScript name for the reference "${ref}"`);
  return name;
}

/** A doc comment of `text` at `indent`, or nothing when there is no text. */
export function docComment(text: unknown, indent: string): string {
  if (typeof text !== "string" || text === "") return "";
  return `${indent}/** ${text.replace(/\*\//g, "*\\/").replace(/\s*\n\s*/g, " ")} */\n`;
}

/** Whether `type` is a union at its top level (a `|` outside any braces, brackets, parentheses or string). */
function isUnion(type: string): boolean {
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < type.length; i++) {
    const char = type[i]!;
    if (quoted) {
      if (char === "\\") i += 1;
      else if (char === '"') quoted = false;
    } else if (char === '"') quoted = true;
    else if ("{([".includes(char)) depth += 1;
    else if ("})]".includes(char)) depth -= 1;
    else if (char === "|" && depth === 0) return true;
  }
  return false;
}

/** A member of a union or an array's item, parenthesized when it is a union itself. */
const grouped = (type: string): string => (isUnion(type) ? `(${type})` : type);

/**
 * The TypeScript type of `schema`, read-only throughout; references become the referenced name.
 * `where` names the place in errors. Throws on a keyword outside the subset (see the file's doc).
 */
export function schemaType(schema: unknown, where: string, indent = ""): string {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) throw new Error(`${where}: a schema must be an object, not ${JSON.stringify(schema)}`);
  const s = schema as Schema;
  for (const key of Object.keys(s)) if (!READ.has(key) && !SKIPPED.has(key)) throw new Error(`${where}: no TypeScript for the JSON Schema keyword "${key}"`);
  if (typeof s.$ref === "string") return refName(s.$ref);
  const union = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (union !== undefined) return unionType(flattened(union).map((member, i) => schemaType(member, `${where}|${i}`, indent)), indent);
  if ("const" in s) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return s.enum.map((value) => JSON.stringify(value)).join(" | ");
  if (Array.isArray(s.type)) return s.type.map((type) => schemaType({ ...s, type }, where, indent)).join(" | ");
  switch (s.type) {
    case "string":
    case "boolean":
    case "null":
      return s.type;
    case "number":
    case "integer":
      return "number";
    case "array":
      return `readonly ${grouped(schemaType(s.items ?? {}, `${where}[]`, indent))}[]`;
    case "object":
      return objectType(s, where, indent);
    case undefined:
      return s.properties === undefined ? "unknown" : objectType(s, where, indent);
    default:
      throw new Error(`${where}: no TypeScript for the JSON Schema type ${JSON.stringify(s.type)}`);
  }
}

/** The members of a union, a member that is only a union itself (and its description) replaced by its own members. */
function flattened(members: readonly unknown[]): unknown[] {
  return members.flatMap((member) => {
    if (typeof member !== "object" || member === null) return [member];
    const { anyOf, oneOf, description: _description, ...rest } = member as Schema;
    const inner = anyOf ?? oneOf;
    return Array.isArray(inner) && Object.keys(rest).length === 0 ? flattened(inner) : [member];
  });
}

function unionType(members: readonly string[], indent: string): string {
  if (members.every((member) => !member.includes("\n"))) return members.map(grouped).join(" | ");
  return members.map((member) => `\n${indent}${INDENT}| ${member.replace(/\n/g, `\n${INDENT}${INDENT}`)}`).join("");
}

/** An object type: its properties (optional unless required), then an index signature for what else it admits. */
function objectType(s: Schema, where: string, indent: string): string {
  const properties = (s.properties ?? {}) as Record<string, unknown>;
  const required = new Set((s.required ?? []) as string[]);
  const inner = indent + INDENT;
  const lines = Object.entries(properties).map(([name, property]) => {
    const key = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
    const doc = docComment((property as Schema).description, inner);
    const type = schemaType(property, `${where}.${name}`, inner);
    return `${doc}${inner}readonly ${key}${required.has(name) ? "" : "?"}:${type.startsWith("\n") ? "" : " "}${type};\n`;
  });
  const rest = s.additionalProperties;
  if (rest !== false && !(rest === undefined && lines.length > 0)) {
    const value = rest === undefined || rest === true ? "unknown" : schemaType(rest, `${where}.*`, inner);
    // Every named property must fit the index signature; only `unknown` holds whatever they are.
    if (lines.length > 0 && value !== "unknown") throw new Error(`${where}: named properties beside additional ones of type ${value}`);
    lines.push(`${inner}readonly [key: string]: ${value};\n`);
  }
  return lines.length === 0 ? "{ readonly [key: string]: never }" : `{\n${lines.join("")}${indent}}`;
}
