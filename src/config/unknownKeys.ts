import { z } from 'zod';
import { editDistance } from './editDistance.js';
import { configFileSchema } from './schema.js';
import { unwrapSchema } from './settingPaths.js';

/** A list's entries in a key path: `targets[].repo`. */
const ENTRY = '[]';

/** Keys longer than this are compared with their siblings only in letter case. */
const MAX_COMPARED_KEY_LENGTH = 64;

/**
 * Every key of the file, as the path of its parent (`trunk`, `targets[]`, '' for the top) and its
 * name, read from the schema so that a new key is known the moment the schema has it.
 */
export const KNOWN_KEYS: readonly { readonly parent: string; readonly key: string }[] = knownKeys(
  configFileSchema,
  '',
);

/** The known keys under each parent, by name in lower case. */
const KEYS_BY_PARENT = new Map<string, Map<string, string>>();
/** The paths of the known keys of each name in lower case, anywhere in the file. */
const PATHS_BY_NAME = new Map<string, string[]>();
for (const { parent, key } of KNOWN_KEYS) {
  const siblings = KEYS_BY_PARENT.get(parent) ?? new Map<string, string>();
  siblings.set(key.toLowerCase(), key);
  KEYS_BY_PARENT.set(parent, siblings);
  const paths = PATHS_BY_NAME.get(key.toLowerCase()) ?? [];
  if (!paths.includes(joinPath(parent, key))) paths.push(joinPath(parent, key));
  PATHS_BY_NAME.set(key.toLowerCase(), paths);
}

/**
 * The message of an unknown key: `unknown key`, with the key it was likely meant to be. Another
 * letter case or a spelling a character or two off of a key of the same section first (`trunk.apikey`:
 * `did you mean apiKey?`), then the same name in other sections (`apiKey` at the top: `unknown key
 * here; did you mean trunk.apiKey?`). Comparing spellings takes time, so only the first
 * `maxComparisons` keys of a file are compared; the lookups by letter case take none, for every key.
 */
export function unknownKeyMessages(
  maxComparisons = 100,
): (parentPath: readonly PropertyKey[], key: string) => string {
  let comparisonsLeft = maxComparisons;
  return (parentPath, key) => {
    const parent = parentPath
      .map((segment) => (typeof segment === 'number' ? ENTRY : String(segment)))
      .reduce((path, segment) => joinPath(path, segment), '');
    const siblings = KEYS_BY_PARENT.get(parent);
    const lowerCase = key.toLowerCase();
    const sameLetters = siblings?.get(lowerCase);
    if (sameLetters !== undefined) return `unknown key; did you mean ${sameLetters}?`;
    if (siblings !== undefined && key.length <= MAX_COMPARED_KEY_LENGTH && comparisonsLeft > 0) {
      comparisonsLeft--;
      const nearest = nearestKey(lowerCase, [...siblings.entries()]);
      if (nearest !== undefined) return `unknown key; did you mean ${nearest}?`;
    }
    const elsewhere = (PATHS_BY_NAME.get(lowerCase) ?? [])
      .filter((path) => path !== joinPath(parent, key))
      .sort();
    if (elsewhere.length === 0) return 'unknown key';
    const named = elsewhere.slice(0, 3);
    const list =
      named.length === 1
        ? (named[0] ?? '')
        : `${named.slice(0, -1).join(', ')} or ${named[named.length - 1] ?? ''}`;
    return `unknown key here; did you mean ${list}?`;
  };
}

/** The sibling spelled at most two characters off (fewer for short keys), the nearest first. */
function nearestKey(lowerCase: string, siblings: readonly [string, string][]): string | undefined {
  const allowed = lowerCase.length <= 4 ? 1 : 2;
  let best: { key: string; distance: number } | undefined;
  for (const [candidate, key] of siblings) {
    const distance = editDistance(lowerCase, candidate);
    if (distance <= allowed && (best === undefined || distance < best.distance))
      best = { key, distance };
  }
  return best?.key;
}

function joinPath(parent: string, key: string): string {
  if (parent === '') return key;
  return key === ENTRY ? `${parent}${ENTRY}` : `${parent}.${key}`;
}

/** The keys of `schema`'s objects, those of a list's entries under `parent[]`. */
function knownKeys(schema: z.ZodType, parent: string): { parent: string; key: string }[] {
  const inner = unwrapSchema(schema);
  if (inner instanceof z.ZodArray)
    return knownKeys(inner.element as z.ZodType, joinPath(parent, ENTRY));
  if (inner instanceof z.ZodObject) {
    return Object.entries(inner.shape as Record<string, z.ZodType>).flatMap(([key, child]) => [
      { parent, key },
      ...knownKeys(child, joinPath(parent, key)),
    ]);
  }
  if (inner instanceof z.ZodUnion) {
    return (inner.options as z.ZodType[]).flatMap((option) => knownKeys(option, parent));
  }
  return [];
}
