// Request bodies of the three operations (trunk-api-v1.md section 4), validated the way the live
// service answers: a 400 whose plain-text message names the offending field.
import { z } from 'zod';

/** Page sizes the live API accepts (trunk-api-notes.md "Errors, limits, paging"). */
export const SIMULATOR_MAX_PAGE_SIZE = 100;

const repoSchema = z.object({
  host: z.string().min(1),
  owner: z.string().min(1),
  name: z.string().min(1),
});

export const getQueueRequestSchema = z.object({
  repo: repoSchema,
  targetBranch: z.string().min(1),
});

export const getSubmittedPullRequestRequestSchema = z.object({
  repo: repoSchema,
  // The interface document's sample number is the largest 32-bit signed integer.
  pr: z.object({ number: z.number().int().positive().max(2_147_483_647) }),
  targetBranch: z.string().min(1),
  // Accepted and ignored, like the live service's optional detail flags.
  includeTimeline: z.boolean().optional(),
  includeEstimatedTimeToMerge: z.boolean().optional(),
});

export const listQuarantinedTestsRequestSchema = z.object({
  repo: repoSchema,
  org_url_slug: z.string().min(1),
  page_query: z.object({
    page_size: z.number().int().min(1).max(SIMULATOR_MAX_PAGE_SIZE),
    page_token: z.string().optional(),
  }),
});

/** One line per problem, each starting with the field's path (`page_query.page_size: ...`). */
export function describeRequestIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.map(String).join('.');
      return `${path === '' ? '(body)' : path}: ${issue.message}`;
    })
    .join('; ');
}
