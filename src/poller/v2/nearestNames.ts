import { editDistance } from '../../config/editDistance.js';
import { repositoryKey } from '../../config/repositoryKey.js';

/** Names suggested at most, and how far (edits per character of `owner/name`) one may be. */
const MOST_SUGGESTED = 3;
const EDITS_PER_CHARACTER = 1 / 3;

/**
 * The names among `names` (`host/owner/name`) nearest to `name`, for a message about a name Trunk
 * does not know: those whose `owner/name` is at most a third of its length in edits away (letter
 * case aside, so a name on another host is at 0), nearest first, at most three.
 */
export function nearestNames(name: string, names: Iterable<string>): string[] {
  const wanted = ownerAndName(name);
  const limit = Math.max(1, Math.floor(wanted.length * EDITS_PER_CHARACTER));
  const scored: { readonly name: string; readonly distance: number }[] = [];
  for (const candidate of new Set(names)) {
    if (repositoryKey(candidate) === repositoryKey(name)) continue;
    const distance = editDistance(wanted, ownerAndName(candidate));
    if (distance <= limit) scored.push({ name: candidate, distance });
  }
  scored.sort((a, b) => a.distance - b.distance || (a.name < b.name ? -1 : 1));
  return scored.slice(0, MOST_SUGGESTED).map((entry) => entry.name);
}

/** `owner/name` of `host/owner/name`, lower-cased. */
function ownerAndName(name: string): string {
  return repositoryKey(name.slice(name.indexOf('/') + 1));
}
