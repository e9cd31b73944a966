import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { TrunkApiError, bodyExcerpt, describeSchemaIssues } from '../../src/trunk/errors.js';

const SECRET = 'tok_abcdefghijklmnop';

describe('bodyExcerpt', () => {
  it('keeps the text of an HTML error page on one line', () => {
    const html = `<html>\n<head><title>502 Bad Gateway</title><style>body{}</style></head>
<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>`;
    expect(bodyExcerpt(html, [])).toBe('502 Bad Gateway 502 Bad Gateway nginx');
  });

  it('cuts at 200 characters and removes control characters', () => {
    const excerpt = bodyExcerpt(`line one\r\nline\u0007two ${'x'.repeat(500)}`, []);
    expect(excerpt.length).toBeLessThanOrEqual(200);
    expect(excerpt.startsWith('line one line two x')).toBe(true);
    expect(excerpt).not.toMatch(/[\r\n]/);
    expect(excerpt).not.toContain(String.fromCharCode(7));
  });

  it('removes a secret even where the cut would split it', () => {
    const text = `${'a'.repeat(190)} ${SECRET} tail`;
    const excerpt = bodyExcerpt(text, [SECRET]);
    expect(excerpt).not.toContain('tok_abcdef');
    expect(bodyExcerpt(`<p>${SECRET}</p>`, [SECRET])).toBe('<redacted>');
  });
});

describe('describeSchemaIssues', () => {
  it('lists the first three paths and counts the rest', () => {
    const schema = z.object({ a: z.number(), items: z.array(z.object({ n: z.number() })) });
    const result = schema.safeParse({ a: 'x', items: [{ n: 1 }, { n: 'y' }, {}, { n: null }] });
    expect(result.success).toBe(false);
    const text = describeSchemaIssues(result.error?.issues ?? []);
    expect(text).toBe(
      'a: expected number, received string; items[1].n: expected number, received string; ' +
        'items[2].n: expected number, received undefined; and 1 more',
    );
  });

  it('names the root', () => {
    const result = z.object({}).safeParse([]);
    expect(describeSchemaIssues(result.error?.issues ?? [])).toBe(
      '(root): expected object, received array',
    );
  });
});

describe('TrunkApiError', () => {
  it('carries its context as fields and in the message', () => {
    const error = new TrunkApiError({
      endpoint: 'flaky-tests/list-quarantined-tests',
      repo: 'github.com/acme/web',
      branch: undefined,
      reason: 'http_status',
      status: 500,
      requestId: 'req-9',
      attempts: 2,
      detail: 'HTTP 500: "boom"',
    });
    expect(error.name).toBe('TrunkApiError');
    expect(error.stack?.startsWith('TrunkApiError: ')).toBe(true);
    expect(error.message).toBe(
      'Trunk API flaky-tests/list-quarantined-tests for github.com/acme/web failed: ' +
        'HTTP 500: "boom" (request id req-9, 2 attempts)',
    );
    expect(error).toMatchObject({ status: 500, requestId: 'req-9', attempts: 2 });
  });
});
