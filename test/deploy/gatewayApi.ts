// The Gateway API's HTTPRoute (gateway.networking.k8s.io/v1), as far as the chart renders one. The
// project has no model package for the Gateway API (@kubernetes-models/gateway-api is not a
// dependency), so this stands in for it: the fields of the v1 API reference for the parts the chart
// writes, their types, required fields and bounds (including the rule that a Service backendRef
// names a port), strict, so an unknown or misplaced field is a problem as with the other kinds.
import { z } from 'zod';

const HOSTNAME = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const OBJECT_NAME = z.string().min(1).max(253);
const SECTION_NAME = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);
const PORT = z.number().int().min(1).max(65535);

const parentReference = z.strictObject({
  group: z.string().max(253).optional(),
  kind: z.string().min(1).max(63).optional(),
  namespace: z.string().min(1).max(63).optional(),
  name: OBJECT_NAME,
  sectionName: SECTION_NAME.optional(),
  port: PORT.optional(),
});

const pathMatch = z.strictObject({
  type: z.enum(['Exact', 'PathPrefix', 'RegularExpression']).optional(),
  value: z.string().max(1024).startsWith('/').optional(),
});

const routeMatch = z.strictObject({
  path: pathMatch.optional(),
  method: z
    .enum(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'])
    .optional(),
});

const backendReference = z
  .strictObject({
    group: z.string().max(253).optional(),
    kind: z.string().min(1).max(63).optional(),
    name: OBJECT_NAME,
    namespace: z.string().min(1).max(63).optional(),
    port: PORT.optional(),
    weight: z.number().int().min(0).max(1_000_000).optional(),
  })
  .refine(
    (reference) =>
      !((reference.group ?? '') === '' && (reference.kind ?? 'Service') === 'Service') ||
      reference.port !== undefined,
    { message: 'Must have port for Service reference' },
  );

/** An HTTPRoute object, strict at every level the chart renders. */
export const httpRouteSchema = z.strictObject({
  apiVersion: z.literal('gateway.networking.k8s.io/v1'),
  kind: z.literal('HTTPRoute'),
  metadata: z.strictObject({
    name: OBJECT_NAME,
    namespace: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
  }),
  spec: z.strictObject({
    parentRefs: z.array(parentReference).max(32).optional(),
    hostnames: z.array(z.string().min(1).max(253).regex(HOSTNAME)).max(16).optional(),
    rules: z
      .array(
        z.strictObject({
          matches: z.array(routeMatch).max(64).optional(),
          backendRefs: z.array(backendReference).max(16).optional(),
        }),
      )
      .max(16)
      .optional(),
  }),
});

/** An HTTPRoute, as the checks read it. */
export type HttpRoute = z.infer<typeof httpRouteSchema>;

/** Why the API server would refuse this HTTPRoute ([] when the stand-in schema accepts it). */
export function httpRouteProblems(object: unknown): string[] {
  const result = httpRouteSchema.safeParse(object);
  return result.success
    ? []
    : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}
