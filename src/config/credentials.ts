import type { ExporterConfig } from './types.js';
import type { ConfigProblem } from './problems.js';
import { isRecord } from './fileValue.js';
import { readSettingFile } from './settingFiles.js';
import { API_KEY_PREFIX, Secret } from '../secrets/secret.js';

/** The environment variable read for the v1 token when neither `token` nor `tokenFile` is set. */
export const TOKEN_ENVIRONMENT_VARIABLE = 'TRUNK_API_TOKEN';
/** The environment variable read for the v2 API key when neither `apiKey` nor `apiKeyFile` is set. */
export const API_KEY_ENVIRONMENT_VARIABLE = 'TRUNK_API_KEY';

/** The credentials of the `trunk` section: at least one of them is set. */
export interface TrunkCredentials {
  /** The v1 organization token (`x-api-token`). */
  readonly token: Secret | undefined;
  /** The v2 API key (`Authorization: Bearer`). */
  readonly apiKey: Secret | undefined;
}

type Resolved = { readonly secret: Secret | undefined } | { readonly problem: ConfigProblem };

/** One credential's three sources: inline, file, environment variable; in that order. */
interface CredentialSources {
  readonly inline: unknown;
  readonly file: unknown;
  readonly inlinePath: string;
  readonly filePath: string;
  readonly variable: string;
  /** `token` or `API key`, for messages. */
  readonly noun: string;
}

/** What the `trunk` section and the environment give for the two credentials. */
export interface ResolvedCredentials {
  /**
   * Which credentials are set (in the file, as a file, or in the environment), usable or not: the
   * rules between settings (discovery needs a key, v1's quarantine list an `orgUrlSlug`) go by
   * these, so that they are reported beside a credential that cannot be read.
   */
  readonly configured: { readonly token: boolean; readonly apiKey: boolean };
  /** Both credentials, when every one that is set could be read; at least one is set. */
  readonly credentials?: TrunkCredentials;
  /** A credential that cannot be read or sent, or none set at all. */
  readonly problems: readonly ConfigProblem[];
}

/**
 * The v1 token and the v2 API key of the `trunk` section, each from its setting, its file or its
 * environment variable; a problem when neither is set, or when one cannot be sent as a header.
 * Each setting is read on its own, whatever else in the section is wrong: a value of the wrong
 * type counts as set and is left to the schema's message.
 */
export async function resolveCredentials(
  trunkSettings: unknown,
  env: Readonly<Record<string, string | undefined>>,
): Promise<ResolvedCredentials> {
  const trunk: Readonly<Record<string, unknown>> = isRecord(trunkSettings) ? trunkSettings : {};
  const tokenSources: CredentialSources = {
    inline: trunk.token,
    file: trunk.tokenFile,
    inlinePath: 'trunk.token',
    filePath: 'trunk.tokenFile',
    variable: TOKEN_ENVIRONMENT_VARIABLE,
    noun: 'token',
  };
  const apiKeySources: CredentialSources = {
    inline: trunk.apiKey,
    file: trunk.apiKeyFile,
    inlinePath: 'trunk.apiKey',
    filePath: 'trunk.apiKeyFile',
    variable: API_KEY_ENVIRONMENT_VARIABLE,
    noun: 'API key',
  };
  const configured = {
    token: isConfigured(tokenSources, env),
    apiKey: isConfigured(apiKeySources, env),
  };
  if (!configured.token && !configured.apiKey) {
    return {
      configured,
      problems: [
        {
          path: 'trunk.apiKey',
          message:
            `no Trunk credential: set an API v2 key (trunk.apiKey, trunk.apiKeyFile or the ` +
            `${API_KEY_ENVIRONMENT_VARIABLE} environment variable; one with no permissions is ` +
            `enough) or an API v1 token (trunk.token, trunk.tokenFile or the ` +
            `${TOKEN_ENVIRONMENT_VARIABLE} environment variable)`,
        },
      ],
    };
  }
  const [token, apiKey] = await Promise.all([
    resolveCredential(tokenSources, env),
    resolveCredential(apiKeySources, env),
  ]);
  const problems = [token, apiKey].flatMap((resolved) =>
    resolved !== 'invalid' && 'problem' in resolved ? [resolved.problem] : [],
  );
  if (problems.length > 0 || token === 'invalid' || apiKey === 'invalid') {
    return { configured, problems };
  }
  const credentials = {
    token: 'secret' in token ? token.secret : undefined,
    apiKey: 'secret' in apiKey ? apiKey.secret : undefined,
  };
  return { configured, credentials, problems };
}

/** Whether any of a credential's sources is set: a key in the file, or a non-empty variable. */
function isConfigured(
  sources: CredentialSources,
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  const fromEnvironment = env[sources.variable];
  return (
    sources.inline !== undefined ||
    sources.file !== undefined ||
    (fromEnvironment !== undefined && fromEnvironment !== '')
  );
}

/** A warning for an API key that does not look like one of Trunk's (never showing the key). */
export function apiKeyWarning(apiKey: Secret | undefined): string | undefined {
  if (apiKey === undefined || apiKey.reveal().startsWith(API_KEY_PREFIX)) return undefined;
  return `the Trunk API key does not start with ${API_KEY_PREFIX} as Trunk's v2 keys do; using it anyway (a v1 token belongs in trunk.token)`;
}

async function resolveCredential(
  sources: CredentialSources,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Resolved | 'invalid'> {
  const { inline, file, noun } = sources;
  if (inline !== undefined) {
    // Not a non-empty string: the schema says what is wrong with it.
    if (typeof inline !== 'string' || inline === '') return 'invalid';
    return checkedCredential(inline, sources.inlinePath, 'not a valid HTTP header value');
  }
  if (file !== undefined) {
    if (typeof file !== 'string' || file === '') return 'invalid';
    const read = await readSettingFile(file, sources.filePath);
    if ('problem' in read) return read;
    const trimmed = read.text.trim();
    if (trimmed === '') return { problem: { path: sources.filePath, message: `${file} is empty` } };
    return checkedCredential(
      trimmed,
      sources.filePath,
      `the ${noun} in ${file} is not a valid HTTP header value`,
    );
  }
  const fromEnvironment = env[sources.variable];
  if (fromEnvironment !== undefined && fromEnvironment !== '') {
    return checkedCredential(
      fromEnvironment,
      '',
      `the ${sources.variable} environment variable is not a valid HTTP header value`,
    );
  }
  return { secret: undefined };
}

/**
 * The credential as a Secret, or a problem at `path` when it cannot be sent as a header: undici
 * would refuse every call with it (a newline from `echo token > file` inside it, a trailing one in
 * a variable). The message names the kind and position of the character, never the credential.
 */
function checkedCredential(value: string, path: string, what: string): Resolved {
  const reason = headerValueProblem(value);
  return reason === undefined
    ? { secret: new Secret(value) }
    : { problem: { path, message: `${what}: ${reason}` } };
}

/** Why `value` is not a valid HTTP header value (RFC 9110 field-value, as undici checks it). */
function headerValueProblem(value: string): string | undefined {
  const invalid = /[^\t\x20-\x7e\x80-\xff]/.exec(value);
  if (invalid !== null) {
    const code = invalid[0].codePointAt(0) ?? 0;
    const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
    const kind =
      invalid[0] === '\n'
        ? `a line break (${hex})`
        : invalid[0] === '\r'
          ? `a carriage return (${hex})`
          : code < 0x20 || code === 0x7f
            ? `a control character (${hex})`
            : 'a character outside Latin-1';
    return `contains ${kind} at character ${invalid.index + 1}`;
  }
  // A server trims these, so the credential it compares would not be the one configured.
  if (/^[\t ]|[\t ]$/.test(value)) return 'starts or ends with white space';
  return undefined;
}

/** Every secret a configuration holds, for the logger's scrubber (KnownSecrets). */
export function secretsOf(config: ExporterConfig): (Secret | undefined)[] {
  return [config.trunk.token, config.trunk.apiKey, config.webhooks.signingSecret];
}
