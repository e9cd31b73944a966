/** Trunk's own API, `trunk.apiUrl`'s default. */
export const TRUNK_API_URL = 'https://api.trunk.io';

/**
 * Requests a second Trunk serves one organization, shared by all its keys and tokens ("100 requests
 * per second per organization"); past it Trunk answers 429.
 */
export const TRUNK_REQUESTS_PER_SECOND_PER_ORGANIZATION = 100;

/** Whether `apiUrl` is Trunk's own API, whose limits are Trunk's (not a simulator's or a fake's). */
export function isTrunksOwnApi(apiUrl: string): boolean {
  return URL.parse(apiUrl)?.hostname === URL.parse(TRUNK_API_URL)?.hostname;
}

/** A version segment at the end of `trunk.apiUrl`: older configurations ended it with `/v1`. */
const VERSION_SUFFIX = /\/(v[12])\/*$/;

/**
 * The API's host (with any path prefix a proxy adds), without a trailing slash or a trailing `/v1`
 * or `/v2`: the client appends `/v1/…` and `/v2/…` itself.
 */
export function apiHostUrl(apiUrl: string): string {
  return apiUrl.replace(VERSION_SUFFIX, '').replace(/\/+$/, '');
}

/** The version segment (`v1` or `v2`) `apiUrl` ends in, or undefined when it ends in none. */
export function versionSegmentOf(apiUrl: string): string | undefined {
  return VERSION_SUFFIX.exec(apiUrl)?.[1];
}
