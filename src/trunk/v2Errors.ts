import { z } from 'zod';

// API v2's error envelope. Edges and the rate limiter answer without it (401 and some 403s, 429,
// 413 and 504 in plain text, gateway 502/503), so it is read only from a JSON body that has it.
const errorEnvelopeSchema = z.object({
  error: z.object({ code: z.string().min(1), message: z.string().optional() }),
});

/** `error.code` and `error.message` of a v2 error answer; undefined when the body has no envelope. */
export function parseErrorEnvelope(
  text: string,
): { readonly code: string; readonly message: string | undefined } | undefined {
  if (!/^\s*\{/.test(text)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = errorEnvelopeSchema.safeParse(json);
  return parsed.success
    ? { code: parsed.data.error.code, message: parsed.data.error.message }
    : undefined;
}
