import { Webhook } from 'svix';
import type { ConfigProblem } from './problems.js';
import { webhooksSectionSchema } from './schema.js';
import { readSettingFile } from './settingFiles.js';
import { Secret } from '../secrets/secret.js';

/**
 * The Svix signing secret of `webhooks` (inline or from `signingSecretFile`), checked by the
 * library that verifies with it, so that a mistyped secret is a problem at load time rather than a
 * 401 for every event. `none` when no secret is set (webhooks off); `invalid` when the section
 * itself is wrong, which the schema reports.
 */
export async function resolveWebhookSecret(
  webhooksSettings: unknown,
): Promise<
  | { readonly secret: Secret | undefined }
  | { readonly problem: ConfigProblem }
  | { readonly invalid: true }
> {
  const webhooks = webhooksSectionSchema.safeParse(webhooksSettings);
  if (!webhooks.success) return { invalid: true };
  const { signingSecret, signingSecretFile } = webhooks.data;
  if (signingSecret !== undefined) {
    return checkedSecret(signingSecret, 'webhooks.signingSecret', '');
  }
  if (signingSecretFile === undefined) return { secret: undefined };
  const file = await readSettingFile(signingSecretFile, 'webhooks.signingSecretFile');
  if ('problem' in file) return file;
  const trimmed = file.text.trim();
  if (trimmed === '') {
    return {
      problem: { path: 'webhooks.signingSecretFile', message: `${signingSecretFile} is empty` },
    };
  }
  return checkedSecret(
    trimmed,
    'webhooks.signingSecretFile',
    `the secret in ${signingSecretFile} is `,
  );
}

/** The secret, or a problem that says what is wrong without showing any of it. */
function checkedSecret(
  value: string,
  path: string,
  /** What the message starts with, before `not a Svix signing secret`. */
  subject: string,
): { readonly secret: Secret } | { readonly problem: ConfigProblem } {
  try {
    // The constructor decodes the base64 key and refuses an empty or malformed one.
    new Webhook(value);
  } catch {
    return {
      problem: {
        path,
        message: `${subject}not a Svix signing secret (expected whsec_ followed by base64, as Trunk shows it)`,
      },
    };
  }
  return { secret: new Secret(value) };
}
