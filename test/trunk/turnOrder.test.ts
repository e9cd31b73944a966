import { describe, expect, it } from 'vitest';
import { TurnOrder, unlinked, type Link } from '../../src/trunk/turnOrder.js';

interface Item {
  readonly name: string;
  readonly link: Link<Item>;
}

function items(...names: string[]): Item[] {
  return names.map((name) => ({ name, link: unlinked<Item>() }));
}

function walk(order: TurnOrder<Item>): string[] {
  const names: string[] = [];
  for (let item = order.first; item !== undefined; item = order.after(item)) names.push(item.name);
  return names;
}

describe('TurnOrder', () => {
  it('walks its members in the order they were added, after deletes at the front, middle and back', () => {
    const order = new TurnOrder<Item>((item) => item.link);
    const [a, b, c, d, e] = items('a', 'b', 'c', 'd', 'e') as [Item, Item, Item, Item, Item];
    for (const item of [a, b, c, d, e]) order.add(item);
    expect(walk(order)).toEqual(['a', 'b', 'c', 'd', 'e']);
    order.delete(a);
    order.delete(c);
    order.delete(e);
    expect(walk(order)).toEqual(['b', 'd']);
    expect(order.size).toBe(2);
    expect([order.has(a), order.has(b)]).toEqual([false, true]);
    // Added again: to the back. Added while a member: keeps its place.
    order.add(a);
    order.add(b);
    expect(walk(order)).toEqual(['b', 'd', 'a']);
    // Deleting a non-member changes nothing.
    order.delete(c);
    expect(walk(order)).toEqual(['b', 'd', 'a']);
    for (const item of [b, d, a]) order.delete(item);
    expect(order.first).toBeUndefined();
    expect(order.size).toBe(0);
    order.add(e);
    expect(walk(order)).toEqual(['e']);
  });

  it('keeps an item in two orders at once through its two links', () => {
    type Two = { name: string; one: Link<Two>; two: Link<Two> };
    const make = (name: string): Two => ({ name, one: unlinked(), two: unlinked() });
    const first = new TurnOrder<Two>((item) => item.one);
    const second = new TurnOrder<Two>((item) => item.two);
    const [x, y] = [make('x'), make('y')];
    first.add(x);
    first.add(y);
    second.add(y);
    second.add(x);
    first.delete(x);
    const names = (order: TurnOrder<Two>): string[] => {
      const out: string[] = [];
      for (let item = order.first; item !== undefined; item = order.after(item))
        out.push(item.name);
      return out;
    };
    expect(names(first)).toEqual(['y']);
    expect(names(second)).toEqual(['y', 'x']);
  });
});
