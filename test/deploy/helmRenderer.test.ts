// The chart renderer itself (test/deploy/helm-render): on a small chart that uses each Helm function
// and object it implements, it renders what Helm 3 renders, and fails where Helm fails, with Helm's
// message. The chart tests can trust it only as far as this holds.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RenderError, helmRenderer, renderChart, type RenderOptions } from './helmRender.js';

const renderer = await helmRenderer();
const CHART = join(import.meta.dirname, 'fixtures', 'helm-render-chart');

/** A values file holding `text`, for -f. */
function valuesFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'trunk-exporter-render-values-')), 'values.yaml');
  writeFileSync(file, text);
  return file;
}

async function render(values = '', options: RenderOptions = {}) {
  return renderChart(renderer ?? '', CHART, {
    releaseName: 'rel',
    namespace: 'ns',
    ...options,
    valueFiles: values === '' ? [] : [valuesFile(values)],
  });
}

async function probeData(
  values = '',
  options: RenderOptions = {},
): Promise<Record<string, string>> {
  const { manifests } = await render(values, options);
  const probe = manifests.find((manifest) =>
    (manifest.object as { metadata: { name: string } }).metadata.name.endsWith('-probe'),
  );
  return (probe?.object as { data: Record<string, string> }).data;
}

async function renderFailure(values: string, options: RenderOptions = {}): Promise<string> {
  const failure = await render(values, options).then(
    () => new Error('rendered, but Helm would have failed'),
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(RenderError);
  return (failure as Error).message;
}

describe.skipIf(renderer === undefined)('the Helm chart renderer (helm-render)', () => {
  it('merges values files over values.yaml: maps merge, a null deletes the key', async () => {
    const data = await probeData('deleted: null\nkept:\n  b: user-b\n');
    expect(JSON.parse(data.kept ?? '')).toEqual({ a: 'default-a', b: 'user-b' });
    expect(data.deleted).toBe('false');
    expect((await probeData()).deleted).toBe('true');
  });

  it('reads values as Helm does: YAML 1.1 booleans, numbers as floats', async () => {
    const data = await probeData();
    expect(data.yes11).toBe('true');
    // Helm's well-known behaviour: an integer value printed with {{ }} becomes 1e+06.
    expect(data.big).toBe('1e+06');
  });

  it('prints a missing value as "" (missingkey=zero without "<no value>")', async () => {
    expect((await probeData()).missing).toBe('[]');
  });

  it('gives .Chart, .Release, .Template, .Files and .Capabilities', async () => {
    const data = await probeData('', { apiVersions: ['monitoring.coreos.com/v1'] });
    expect(data).toMatchObject({
      chart: 'probe-1.2.3-4.5',
      release: 'rel/ns/Helm/true',
      template: 'probe/templates/configmap.yaml probe/templates',
      file: 'hello from files/',
      // .helmignore keeps *.bak out of .Files.
      ignoredFile: '',
      kube: 'v1.30.0',
      minor: '30',
      hasApps: 'true',
      hasMonitoring: 'true',
    });
    expect((await probeData('', { kubeVersion: '1.27.3' })).kube).toBe('v1.27.3');
    expect((await probeData()).hasMonitoring).toBe('false');
  });

  it('has include (with nindent), tpl, fromYaml, toJson and lookup (finding nothing)', async () => {
    const { manifests } = await render();
    const probe = manifests[0]?.object as { metadata: { labels: unknown } };
    expect(probe.metadata.labels).toEqual({ app: 'probe', tier: 'backend' });
    const data = await probeData();
    expect(data).toMatchObject({ tpl: 'release rel', fromYaml: '[1,2]', lookup: '{}' });
  });

  it('renders templates, not partials, splits documents, and keeps NOTES.txt apart', async () => {
    const { manifests, notes } = await render();
    expect(manifests.map((manifest) => manifest.source)).toEqual([
      'probe/templates/configmap.yaml',
      'probe/templates/configmap.yaml',
    ]);
    expect(JSON.stringify(manifests)).not.toContain('never rendered');
    expect(notes).toBe('Notes for rel in ns.\n');
  });

  it('validates values against values.schema.json before rendering', async () => {
    // The template would fail on limit 6 too, but the schema speaks first, as in Helm.
    const message = await renderFailure('limit: 6\n');
    expect(message).toContain(
      "values don't meet the specifications of the schema(s) in the following chart(s):\nprobe:\n- limit: Must be less than or equal to 5",
    );
    expect(message).not.toContain("the template's own check");
  });

  it('fails with the message of required and fail', async () => {
    expect(await renderFailure('requireMe: ""\n')).toMatch(
      /^Error: execution error at \(probe\/templates\/configmap\.yaml:\d+:\d+\): requireMe: set it$/,
    );
    expect(await renderFailure('failWith: stop here\n')).toContain('error calling fail: stop here');
  });

  it('fails on a document that is not YAML, naming its template', async () => {
    expect(await renderFailure('brokenIndent: true\n')).toMatch(
      /^Error: YAML parse error on probe\/templates\/configmap\.yaml: /,
    );
  });

  it('has no env or expandenv (Helm removes them from sprig)', async () => {
    expect(await renderFailure('tplText: \'{{ env "HOME" }}\'\n')).toContain(
      'function "env" not defined',
    );
  });

  it("fails on a cluster older than Chart.yaml's kubeVersion", async () => {
    expect(await renderFailure('', { kubeVersion: '1.24.0' })).toBe(
      'Error: chart requires kubeVersion: >=1.25.0-0 which is incompatible with Kubernetes v1.24.0',
    );
  });
});
