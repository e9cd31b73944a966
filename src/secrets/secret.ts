import { inspect } from 'node:util';

const REDACTED = '<redacted>';

/** How Trunk's v2 API keys begin; another prefix is accepted with a warning (a proxy may rewrite keys). */
export const API_KEY_PREFIX = 'trunk_v2_';

/**
 * Holds the API token so that no accidental path (JSON.stringify, util.inspect, template strings,
 * pino serializers) can print it: only `reveal()` gives the value, and only the HTTP client calls it.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The secret value, for the one place that must send it. */
  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }
}
