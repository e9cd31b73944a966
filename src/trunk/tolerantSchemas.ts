import { z } from 'zod';

// Schema pieces shared by the v1 and v2 response schemas: an odd item costs itself and an odd
// optional field costs the field, never the whole answer.

/** What a list item that does not fit its schema becomes; dropped and counted after parsing. */
export const UNUSABLE_ITEM = Symbol('unusable list item');

/**
 * A list whose items are parsed one by one, for v1 and v2 answers alike: an item that does not fit
 * becomes UNUSABLE_ITEM, which responseAnomalies.ts drops and counts, so one odd item never costs
 * the whole answer.
 */
export function tolerantList<T extends z.ZodType>(item: T) {
  return z.array(z.union([item, z.unknown().transform((): typeof UNUSABLE_ITEM => UNUSABLE_ITEM)]));
}

/** A field read when it is usable; absent, null or any other type reads as absent. */
export function optionalValue<T extends z.ZodType>(schema: T) {
  return schema.optional().catch(undefined);
}

/**
 * A text shown as a label value, read when usable: absent, null, of another type or empty (a label
 * value Prometheus reads as no label) reads as absent, which the label shows as `unknown`.
 */
export const optionalLabelText = optionalValue(z.string().min(1));

/**
 * A pull request's number, what a row is told apart by: a whole number above 0, as Trunk's
 * definition gives it ("exclusiveMinimum": 0 for `pullRequestNumber` of a testing result and for
 * every number a pull request is submitted with, so for every pull request a queue lists). A row
 * whose number is not one is unusable, whether 0, negative, a fraction or a string (of a
 * verification run's tested pull requests, only that entry is).
 */
export const pullRequestNumber = z.number().int().positive();

/**
 * A count or duration Trunk's definition gives as an `integer` from 0: a whole number of any size.
 * Not zod's int(), which refuses integers past 2^53 (Number.MAX_SAFE_INTEGER), though JSON.parse
 * reads each as a whole double and a gauge shows it as one.
 */
export const wholeNumberFromZero = z
  .number()
  .nonnegative()
  .refine(Number.isInteger, 'expected a whole number');
