// Text an answer gives that the exporter shows as a label value: a transition's reason, a check's
// name, a test collection's name. Trunk's are short identifiers and names; a longer one would be
// held per queue and carried by every page, so it is cut, and reported as `invalid_field`.

/** The longest such text kept, in UTF-16 code units (as webhook values, MAX_EVENT_VALUE_LENGTH). */
export const MAX_LABEL_TEXT_LENGTH = 200;

/** Whether `text` is longer than a label value may be. */
export function isOverlong(text: string): boolean {
  return text.length > MAX_LABEL_TEXT_LENGTH;
}

/** `text` cut to MAX_LABEL_TEXT_LENGTH, ending in `…`, never inside a surrogate pair. */
export function cutLabelText(text: string): string {
  if (!isOverlong(text)) return text;
  let end = MAX_LABEL_TEXT_LENGTH - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/**
 * What a name Trunk's definition lets be empty (a check's, a test collection's) shows as: to
 * Prometheus an empty label value is no label at all.
 */
export const EMPTY_NAME_LABEL = 'unknown';

/** Whether `name` cannot be a label value as it is: empty, or too long. */
export function isUnfitName(name: string): boolean {
  return name === '' || isOverlong(name);
}

/** `name` as a label value: EMPTY_NAME_LABEL when empty, else cut when too long. */
export function nameLabel(name: string): string {
  return name === '' ? EMPTY_NAME_LABEL : cutLabelText(name);
}

/** The label values of one answer, each cut when too long, and how many were (`invalid_field`). */
export class LabelTextCuts {
  count = 0;

  /** `name` as nameLabel gives it, a cut counted: an empty name is the definition's, not an error. */
  name(name: string): string {
    return name === '' ? EMPTY_NAME_LABEL : this.cut(name);
  }

  /** `text` cut to MAX_LABEL_TEXT_LENGTH when too long, and counted. */
  cut(text: string): string {
    if (!isOverlong(text)) return text;
    this.count += 1;
    return cutLabelText(text);
  }
}
