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
