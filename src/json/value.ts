/** A value JSON can carry as it is: what a stored result holds, never JSON text inside a string. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** `T` with every array and object read-only, all the way down: what a built resource is once it is handed on. */
export type DeepReadonly<T> = T extends readonly (infer U)[] ? readonly DeepReadonly<U>[] : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;
