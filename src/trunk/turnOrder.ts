// An insertion-ordered collection that FairSlots walks from the front on every grant.

/** An item's place in one TurnOrder; each item keeps one Link per order it can be in. */
export interface Link<T> {
  prev: T | undefined;
  next: T | undefined;
  member: boolean;
}

/** A fresh Link, for an item in no order yet. */
export function unlinked<T>(): Link<T> {
  return { prev: undefined, next: undefined, member: false };
}

/**
 * Items in the order they were added, with O(1) add at the back, delete anywhere, and a walk from
 * the front that sees only members. A Set served the same purpose, but a Set used as a queue
 * (deleted at the front, added at the back) keeps its deleted entries as holes until it rehashes,
 * and every walk from the front skipped them: hundreds per grant with a thousand targets waiting.
 */
export class TurnOrder<T> {
  readonly #link: (item: T) => Link<T>;
  #first: T | undefined;
  #last: T | undefined;
  #size = 0;

  /** `link` gives an item's Link for this order (always the same object for one item). */
  constructor(link: (item: T) => Link<T>) {
    this.#link = link;
  }

  get size(): number {
    return this.#size;
  }

  /** The front item, or undefined when empty. */
  get first(): T | undefined {
    return this.#first;
  }

  /** The item after `item` (a member), or undefined at the back. */
  after(item: T): T | undefined {
    return this.#link(item).next;
  }

  has(item: T): boolean {
    return this.#link(item).member;
  }

  /** Puts `item` at the back, unless it is a member already (then it keeps its place). */
  add(item: T): void {
    const link = this.#link(item);
    if (link.member) return;
    link.member = true;
    link.prev = this.#last;
    link.next = undefined;
    if (this.#last === undefined) this.#first = item;
    else this.#link(this.#last).next = item;
    this.#last = item;
    this.#size += 1;
  }

  /** Removes `item` if it is a member. */
  delete(item: T): void {
    const link = this.#link(item);
    if (!link.member) return;
    const { prev, next } = link;
    if (prev === undefined) this.#first = next;
    else this.#link(prev).next = next;
    if (next === undefined) this.#last = prev;
    else this.#link(next).prev = prev;
    link.member = false;
    link.prev = undefined;
    link.next = undefined;
    this.#size -= 1;
  }
}
