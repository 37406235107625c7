/**
 * Typed arguments and configuration from one declaration: a schema built with `t` gives the
 * JSON Schema the model sees, the parser that checks a call's JSON, and (through `Infer`)
 * the TypeScript type the handler receives, so the three never disagree.
 *
 * ```ts
 * const Args = t.object({ to: t.string("A later stage"), force: t.optional(t.boolean()) });
 * type Args = Infer<typeof Args>; // { to: string; force?: boolean }
 * ```
 *
 * Objects are closed (unknown keys are refused, as the Rust SDK's `deny_unknown_fields`
 * does), and every error names the field's path.
 */

/** A value that does not fit its schema; the message names the field. */
export class ArgumentError extends Error {}

/** One node of a schema: its JSON Schema, and how a JSON value is checked against it. */
export interface Schema<T> {
  readonly json: Record<string, unknown>;
  /** `value` as a `T`, or an ArgumentError naming `path`. */
  parse(value: unknown, path: string): T;
  /** Absent is allowed (an object's optional field), with this default when there is one. */
  readonly optional?: { readonly fallback?: T };
}

/** The TypeScript type a schema describes. */
export type Infer<S> = S extends Schema<infer T> ? T : never;

type Shape = Record<string, Schema<unknown>>;
type OptionalKeys<S extends Shape> = {
  [K in keyof S]: S[K] extends { optional: object } ? K : never;
}[keyof S];
type RequiredKeys<S extends Shape> = Exclude<keyof S, OptionalKeys<S>>;
/** The object type of a shape: optional fields may be absent. */
export type InferShape<S extends Shape> = { [K in RequiredKeys<S>]: Infer<S[K]> } & {
  [K in OptionalKeys<S>]?: Infer<S[K]>;
};

function fail(path: string, message: string): ArgumentError {
  return new ArgumentError(path ? `\`${path}\`: ${message}` : message);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "number") return Number.isInteger(value) ? "an integer" : "a number";
  return `a ${typeof value}`;
}

function described(json: Record<string, unknown>, description?: string): Record<string, unknown> {
  return description ? { ...json, description } : json;
}

function primitive<T>(type: string, expected: string, test: (value: unknown) => boolean) {
  return (description?: string): Schema<T> => ({
    json: described({ type }, description),
    parse(value, path) {
      if (!test(value)) throw fail(path, `expected ${expected}, found ${describe(value)}`);
      return value as T;
    },
  });
}

function join(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

/** The schema builders. */
export const t = {
  string: primitive<string>("string", "a string", (v) => typeof v === "string"),
  number: primitive<number>("number", "a number", (v) => typeof v === "number" && Number.isFinite(v)),
  integer: primitive<number>("integer", "an integer", (v) => typeof v === "number" && Number.isInteger(v)),
  boolean: primitive<boolean>("boolean", "a boolean", (v) => typeof v === "boolean"),

  /** One of a few literal values. */
  enum<const V extends readonly (string | number)[]>(values: V, description?: string): Schema<V[number]> {
    return {
      json: described({ enum: [...values] }, description),
      parse(value, path) {
        if (!values.includes(value as V[number])) {
          const listed = values.map((v) => `\`${v}\``).join(", ");
          throw fail(path, `expected one of ${listed}, found \`${String(value)}\``);
        }
        return value as V[number];
      },
    };
  },

  array<T>(items: Schema<T>, description?: string): Schema<T[]> {
    return {
      json: described({ type: "array", items: items.json }, description),
      parse(value, path) {
        if (!Array.isArray(value)) throw fail(path, `expected an array, found ${describe(value)}`);
        return value.map((item, index) => items.parse(item, join(path, index)));
      },
    };
  },

  /** A closed object: its fields, each required unless wrapped in `t.optional`. */
  object<S extends Shape>(shape: S, description?: string): Schema<InferShape<S>> {
    const keys = Object.keys(shape);
    const required = keys.filter((key) => !shape[key].optional);
    const properties = Object.fromEntries(keys.map((key) => [key, shape[key].json]));
    const json: Record<string, unknown> = { type: "object", properties, additionalProperties: false };
    if (required.length) json.required = required;
    return {
      json: described(json, description),
      parse(value, path) {
        if (typeof value !== "object" || value === null || Array.isArray(value)) {
          throw fail(path, `expected an object, found ${describe(value)}`);
        }
        const record = value as Record<string, unknown>;
        const unknown = Object.keys(record).find((key) => !(key in shape));
        if (unknown !== undefined) {
          const expected = keys.map((key) => `\`${key}\``).join(", ") || "none";
          throw fail(path, `unknown field \`${unknown}\`, expected ${expected}`);
        }
        const parsed: Record<string, unknown> = {};
        for (const key of keys) {
          const field = shape[key];
          if (key in record && record[key] !== undefined) {
            parsed[key] = field.parse(record[key], join(path, key));
          } else if (!field.optional) {
            throw fail(path, `missing field \`${key}\``);
          } else if (field.optional.fallback !== undefined) {
            parsed[key] = field.optional.fallback;
          }
        }
        return parsed as InferShape<S>;
      },
    };
  },

  /** A field that may be absent; with `fallback`, absent reads as it. */
  optional<T>(inner: Schema<T>, fallback?: T): Schema<T> & { optional: { fallback?: T } } {
    return { json: inner.json, parse: (value, path) => inner.parse(value, path), optional: { fallback } };
  },
};

/** The schema of a tool that takes no arguments: an empty closed object. */
export const noArgs = t.object({});
