/** Replaces every occurrence of each secret (and its JSON-escaped form) with `<redacted>`. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret.length === 0) continue;
    result = result.split(secret).join('<redacted>');
    const escaped = JSON.stringify(secret).slice(1, -1);
    if (escaped !== secret) result = result.split(escaped).join('<redacted>');
  }
  return result;
}
