import { RE2JS } from 're2js';

/** Contract §13.1: at most this many regular expressions (`pattern`, `patternProperties` keys) in one schema. */
export const MAX_REGEXES = 100;
/** …and at most this many characters in all of them together (RE2 matches in time input × pattern). */
export const MAX_REGEX_CHARS = 8192;
/** `uniqueItems` on items that are not all scalars compares every pair: n² / 2 deep comparisons. */
export const MAX_UNIQUE_ITEMS = 10_000;

/**
 * Keywords a schema may amount to once every `$ref` is counted as ajv compiles it: a referenced
 * schema without references of its own is inlined into each place that uses it; one with
 * references is compiled once, as a function of its own, and called. Without references a keyword
 * takes at least 8 bytes of JSON (`"if":{},`), so a 64 KiB schema has fewer than 8,200; 100 `$ref`s
 * to a 100-property definition make 20,000, which took ajv 5.4 s to compile (docs/trigger-schema.md).
 */
export const MAX_EXPANDED_KEYWORDS = 10_000;

const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);
/** Keywords holding one subschema, a list of them, or a map of them (draft 2020-12 and the older `definitions`). */
const ONE = ['not', 'if', 'then', 'else', 'items', 'contains', 'additionalProperties', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties'];
const LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
/** Keywords that apply their subschemas to the same value: a loop through them never ends. */
const IN_PLACE_ONE = ['not', 'if', 'then', 'else'];
const IN_PLACE_LIST = ['allOf', 'anyOf', 'oneOf'];

type Node = Record<string, unknown>;
interface Located {
  node: Node;
  pointer: string;
  /** The base URI its `$ref`s resolve against (the nearest `$id` at or above it); undefined when it cannot be placed. */
  base: string | undefined;
}

/**
 * The base of a schema without an `$id`, for placing references only: any absolute URI does, and
 * one with a path lets a relative `$id` or `$ref` resolve against it (ajv resolves them against the
 * root's id too).
 */
const DEFAULT_BASE = 'https://trigger-schema.invalid/';

/**
 * The static rules of contract §13.1, checked before anything is compiled: the regular
 * expressions (count, total size, RE2 syntax), `uniqueItems` bounds and `$ref` loops.
 * Returns why the schema is refused, or undefined. Linear in the schema (at most 64 KiB).
 */
export function staticProblem(schema: Node): string | undefined {
  const nodes = subschemas(schema);
  return regexProblem(nodes) ?? uniqueItemsProblem(nodes) ?? refLoopProblem(schema, nodes);
}

/**
 * The keywords the schema amounts to as ajv compiles it (see MAX_EXPANDED_KEYWORDS): the code of
 * the root, with a reference to a schema without references counted as that schema (inlined
 * wherever it is used), and one to a schema with references counted once per reference URI (ajv
 * keeps one compiled function per URI and calls it). `$defs` alone generate nothing. Memoized per
 * subschema (a reference back into its own chain counted once): linear in the schema, and stops
 * counting past `cap`.
 */
export function expandedKeywords(root: Node, cap = MAX_EXPANDED_KEYWORDS): number {
  const sizes = new Map<Node, number>();
  const visiting = new Set<Node>();
  const nodes = subschemas(root);
  const targets = refResolver(root, nodes);
  const baseOf = new Map(nodes.map(({ node, base }) => [node, base]));
  /** Schemas with references that are referenced, by the URI ajv compiles each under. */
  const called = new Map<string, Node>();
  const withRefs = new Map<unknown, boolean>();
  const size = (node: Node): number => {
    const known = sizes.get(node);
    if (known !== undefined) return known;
    if (visiting.has(node)) return 1;
    visiting.add(node);
    let total = Object.keys(node).length;
    for (const child of children(node)) {
      total = Math.min(cap + 1, total + size(child));
      if (total > cap) break;
    }
    for (const [ref, dynamic] of [[node.$ref, false], [node.$dynamicRef, true]] as const) {
      if (total > cap || typeof ref !== 'string') continue;
      for (const target of targets(ref, baseOf.get(node), dynamic)) {
        if (!hasRef(target, withRefs)) total = Math.min(cap + 1, total + size(target));
        else {
          // One call here; the target's own code once per URI it is compiled under.
          total += 1;
          const uri = resolveUri(ref, baseOf.get(node)) ?? ref;
          if (!called.has(uri)) called.set(uri, target);
        }
      }
    }
    visiting.delete(node);
    sizes.set(node, total);
    return total;
  };
  let total = size(root);
  // Compiled functions found while counting add theirs: the loop also visits those found on the way.
  for (const [uri, target] of called) {
    if (total > cap) break;
    if (target === root && (uri.endsWith('#') || !uri.includes('#'))) continue; // `#`: the root's own function
    total = Math.min(cap + 1, total + size(target));
  }
  return total;
}

/** The keywords that make ajv call rather than inline a referenced schema (ajv's resolve.ts hasRef): anywhere in it. */
const REF_KEYWORDS = ['$ref', '$recursiveRef', '$recursiveAnchor', '$dynamicRef', '$dynamicAnchor'];

function hasRef(value: unknown, memo: Map<unknown, boolean>): boolean {
  if (value === null || typeof value !== 'object') return false;
  const known = memo.get(value);
  if (known !== undefined) return known;
  memo.set(value, false); // a value reached again through itself adds nothing
  const found =
    (!Array.isArray(value) && REF_KEYWORDS.some((key) => Object.hasOwn(value, key))) ||
    Object.values(value as Record<string, unknown>).some((child) => hasRef(child, memo));
  memo.set(value, found);
  return found;
}

/** The subschemas whose code is generated where they stand (not `$defs`: only what refers to them compiles them). */
function children(node: Node): Node[] {
  const found: unknown[] = ONE.map((key) => node[key]);
  for (const key of LIST) if (Array.isArray(node[key])) found.push(...(node[key] as unknown[]));
  for (const key of MAP) if (key !== '$defs' && key !== 'definitions' && isNode(node[key])) found.push(...Object.values(node[key] as Node));
  return found.filter(isNode);
}

function subschemas(root: Node): Located[] {
  const found: Located[] = [];
  const stack: Omit<Located, 'base'>[] = [{ node: root, pointer: '' }];
  const parentBase = new Map<Node, string | undefined>([[root, DEFAULT_BASE]]);
  while (stack.length > 0) {
    const next = stack.pop()!;
    const inherited = parentBase.get(next.node);
    const at: Located = { ...next, base: typeof next.node.$id === 'string' ? resolveUri(next.node.$id, inherited) : inherited };
    found.push(at);
    const push = (value: unknown, pointer: string) => {
      if (!isNode(value)) return;
      parentBase.set(value, at.base);
      stack.push({ node: value, pointer });
    };
    for (const key of ONE) push(at.node[key], `${at.pointer}/${key}`);
    for (const key of LIST) {
      const list = at.node[key];
      if (Array.isArray(list)) list.forEach((item, i) => push(item, `${at.pointer}/${key}/${i}`));
    }
    for (const key of MAP) {
      const map = at.node[key];
      if (isNode(map)) for (const [name, value] of Object.entries(map)) push(value, `${at.pointer}/${key}/${escapePointer(name)}`);
    }
  }
  return found;
}

function regexProblem(nodes: Located[]): string | undefined {
  const regexes: { source: string; pointer: string }[] = [];
  for (const { node, pointer } of nodes) {
    if (typeof node.pattern === 'string') regexes.push({ source: node.pattern, pointer: `${pointer}/pattern` });
    if (isNode(node.patternProperties)) {
      for (const source of Object.keys(node.patternProperties)) regexes.push({ source, pointer: `${pointer}/patternProperties` });
    }
  }
  if (regexes.length > MAX_REGEXES) return `the schema has ${regexes.length} regular expressions (pattern, patternProperties); at most ${MAX_REGEXES}`;
  const chars = regexes.reduce((sum, regex) => sum + regex.source.length, 0);
  if (chars > MAX_REGEX_CHARS) return `the schema's regular expressions have ${chars} characters in all; at most ${MAX_REGEX_CHARS}`;
  for (const { source, pointer } of regexes) {
    try {
      RE2JS.compile(source);
    } catch (error) {
      return `not a usable JSON Schema (draft 2020-12): ${pointer}: a regular expression RE2 cannot run (no lookaround or backreferences): ${String((error as Error).message).slice(0, 200)}`;
    }
  }
  return undefined;
}

/** Ajv compares scalar items through a map (linear); anything else pair by pair. */
function uniqueItemsProblem(nodes: Located[]): string | undefined {
  for (const { node, pointer } of nodes) {
    if (node.uniqueItems !== true || scalarItems(node.items)) continue;
    const max = node.maxItems;
    if (typeof max !== 'number' || max > MAX_UNIQUE_ITEMS) {
      return `${pointer || '/'}: uniqueItems on items without a scalar type needs maxItems of at most ${MAX_UNIQUE_ITEMS}`;
    }
  }
  return undefined;
}

function scalarItems(items: unknown): boolean {
  if (!isNode(items)) return false;
  const types = Array.isArray(items.type) ? items.type : [items.type];
  return types.length > 0 && types.every((type) => typeof type === 'string' && SCALAR_TYPES.has(type));
}

/**
 * A `$ref` that leads back to the same schema without descending into the value (through
 * allOf/anyOf/oneOf/not/if/then/else/dependentSchemas) would recurse forever on any value that
 * reaches it. References are resolved against the nearest `$id` (refResolver), so a loop through
 * a nested resource is found too. One the rules cannot place is not followed here; should it
 * loop, the check (check-pool.ts) refuses the delivery with a 400, never a 500.
 */
function refLoopProblem(root: Node, nodes: Located[]): string | undefined {
  const pointerOf = new Map(nodes.map(({ node, pointer }) => [node, pointer]));
  const baseOf = new Map(nodes.map(({ node, base }) => [node, base]));
  const targets = refResolver(root, nodes);
  const inPlace = (node: Node): Node[] => {
    const next: unknown[] = [...IN_PLACE_ONE.map((key) => node[key])];
    for (const key of IN_PLACE_LIST) if (Array.isArray(node[key])) next.push(...(node[key] as unknown[]));
    if (isNode(node.dependentSchemas)) next.push(...Object.values(node.dependentSchemas));
    const base = baseOf.get(node);
    return [...next.filter(isNode), ...targets(node.$ref, base, false), ...targets(node.$dynamicRef, base, true)];
  };
  // Iterative depth-first search: grey = on the current path.
  const state = new Map<Node, 'grey' | 'black'>();
  for (const { node: start } of nodes) {
    if (state.has(start)) continue;
    const path: { node: Node; next: Node[] }[] = [{ node: start, next: inPlace(start) }];
    state.set(start, 'grey');
    while (path.length > 0) {
      const top = path[path.length - 1];
      const child = top.next.pop();
      if (child === undefined) {
        state.set(top.node, 'black');
        path.pop();
      } else if (state.get(child) === 'grey') {
        return `${pointerOf.get(child) || '/'}: its $ref leads back to itself without descending into the value (an endless loop)`;
      } else if (!state.has(child)) {
        state.set(child, 'grey');
        path.push({ node: child, next: inPlace(child) });
      }
    }
  }
  return undefined;
}

/**
 * Where a `$ref` leads, resolved as ajv resolves it: against the base URI of the subschema it is
 * in (the nearest `$id`), to a resource (the root, or a subschema with an `$id`) and within it to
 * the resource itself (`#`), a JSON pointer (`#/…`) or an anchor (`#name`, `$anchor` or
 * `$dynamicAnchor` of that resource). A `$dynamicRef` may also lead to any `$dynamicAnchor` of its
 * name (the dynamic scope decides which). [] when the rules cannot place it.
 */
function refResolver(root: Node, nodes: Located[]): (ref: unknown, base: string | undefined, dynamic: boolean) => Node[] {
  const resources = new Map<string, Node>();
  const anchors = new Map<string, Node[]>();
  const dynamicAnchors = new Map<string, Node[]>();
  const add = (map: Map<string, Node[]>, key: string, node: Node) => {
    const list = map.get(key);
    if (list) list.push(node);
    else map.set(key, [node]);
  };
  for (const { node, base } of nodes) {
    if (base === undefined) continue;
    const resource = withoutFragment(base);
    if (node === root || typeof node.$id === 'string') resources.set(resource, node);
    for (const key of ['$anchor', '$dynamicAnchor']) {
      const anchor = node[key];
      if (typeof anchor === 'string') add(anchors, `${resource}#${anchor}`, node);
    }
    if (typeof node.$dynamicAnchor === 'string') add(dynamicAnchors, node.$dynamicAnchor, node);
  }
  return (ref, base, dynamic) => {
    if (typeof ref !== 'string') return [];
    const absolute = resolveUri(ref, base);
    if (absolute === undefined) return [];
    const hash = absolute.indexOf('#');
    const resourceUri = hash < 0 ? absolute : absolute.slice(0, hash);
    const fragment = hash < 0 ? '' : absolute.slice(hash + 1);
    const resource = resources.get(resourceUri);
    const found: Node[] = [];
    if (fragment.startsWith('/')) {
      // Each token of the pointer is percent-decoded by resolvePointer.
      const target = resource && resolvePointer(resource, fragment);
      if (target) found.push(target);
      return found;
    }
    const anchor = safeDecode(fragment);
    if (resource && anchor === '') found.push(resource);
    else if (resource) found.push(...(anchors.get(`${resourceUri}#${anchor}`) ?? []));
    if (dynamic && anchor !== '') found.push(...(dynamicAnchors.get(anchor) ?? []));
    return found;
  };
}

/** `ref` resolved against `base` (RFC 3986, as WHATWG URL does it); undefined when it cannot be. */
function resolveUri(ref: string, base: string | undefined): string | undefined {
  try {
    return new URL(ref, base).href;
  } catch {
    return undefined;
  }
}

function withoutFragment(uri: string): string {
  const hash = uri.indexOf('#');
  return hash < 0 ? uri : uri.slice(0, hash);
}

function resolvePointer(root: Node, pointer: string): Node | undefined {
  let at: unknown = root;
  for (const raw of pointer.split('/').slice(1)) {
    const key = safeDecode(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return isNode(at) ? at : undefined;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function isNode(value: unknown): value is Node {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
