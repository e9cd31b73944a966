// What advice about Trunk's credentials must hold, wherever it is written (the alert table of the
// docs, the alerts' annotations): it fits both credentials, not only the v1 token.

/** Why `text` gives advice that fits one credential only; empty when it fits both (or names none). */
export function credentialAdviceProblems(text: string): string[] {
  const problems: string[] = [];
  const namesToken = /TRUNK_API_TOKEN|trunk\.token/.test(text);
  const namesKey = /TRUNK_API_KEY|trunk\.apiKey/.test(text);
  if (namesToken && !namesKey) problems.push('names the v1 token but not the API key');
  if (namesKey && !namesToken) problems.push('names the API key but not the v1 token');
  if (/\btoken\b[^.]*\b(wrong|revoked|rotated)\b/i.test(text) && !/\bkey\b/i.test(text))
    problems.push('blames the token alone, though an endpoint under v2/ is read with the API key');
  // These only shape API v1's per-PR lookups: with a key they do nothing.
  if (
    /pullRequestDetails|pullRequestRecheckSeconds/.test(text) &&
    !/with a key they do nothing/.test(text)
  )
    problems.push('advises an API v1 only setting without saying it does nothing with a key');
  // A reload reads the credential files again: a restart is not the only way.
  if (/tokenFile|apiKeyFile|Secret/.test(text) && /\brestart/.test(text) && !/\breload/.test(text))
    problems.push('says to restart where a reload reads the credential files again');
  return problems;
}
