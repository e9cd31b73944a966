const REDACTED = '<redacted>';

/**
 * Replaces the user information of every URL in a log line (`https://user:pass@host` becomes
 * `https://<redacted>@host`): a URL from a config, an error or an upstream must not leak a password.
 */
export function redactUrlCredentials(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#"\\<>]*@/gi, `$1${REDACTED}@`);
}
