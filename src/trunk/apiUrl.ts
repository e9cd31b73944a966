/** The version segment older configurations ended `trunk.apiUrl` with. */
const VERSION_SUFFIX = /\/v1\/*$/;

/**
 * The API's host (with any path prefix a proxy adds), without a trailing slash or a trailing `/v1`:
 * the client appends `/v1/…` and `/v2/…` itself.
 */
export function apiHostUrl(apiUrl: string): string {
  return apiUrl.replace(VERSION_SUFFIX, '').replace(/\/+$/, '');
}

/** Whether `apiUrl` still ends in `/v1`, the form `trunk.apiUrl` had before API v2. */
export function endsInVersionSegment(apiUrl: string): boolean {
  return VERSION_SUFFIX.test(apiUrl);
}
