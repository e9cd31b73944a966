// The exporter's --check-config on the config file a rendered chart hands it, with the pod's files
// laid out where the pod mounts them and stand-ins for the existing Secrets the values name.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { checkConfigInProcess } from '../support/checkConfig.js';
import type { FinishedProcess } from '../support/nodeProcess.js';
import { isMap } from './helmValues.js';
import type { Container, InstalledValues, Workload } from './helmValueSets.js';
import type { KubeObject } from './kubernetesObjects.js';
import { layOutPodFiles } from './podFiles.js';
import { ROOT } from './ruleFiles.js';

const TLS_FIXTURES = join(ROOT, 'test', 'fixtures', 'tls');
/** The signing secret an existing Secret holds, as the pod would mount it. */
export const EXISTING_SIGNING_SECRET = 'whsec_c2VjcmV0LWZyb20tYW4tZXhpc3Rpbmctc2VjcmV0';

/** The config file the pod reads, parsed, and what --check-config made of it. */
export interface CheckedRenderedConfig {
  readonly config: unknown;
  readonly result: FinishedProcess;
}

/** Runs --check-config on the rendered pod's config file, its /etc/ paths under the laid-out root. */
export async function checkRenderedConfig(
  objects: readonly KubeObject[],
  workload: Workload,
  container: Container,
  values: InstalledValues,
): Promise<CheckedRenderedConfig> {
  const existingSecrets = {
    [values.token.existingSecret]: {
      [values.token.existingSecretKey]: 'from-an-existing-secret',
    },
    [values.apiKey.existingSecret]: {
      [values.apiKey.existingSecretKey]: 'trunk_v2_from-an-existing-secret',
    },
    [values.webhooks.signingSecret.existingSecret]: {
      [values.webhooks.signingSecret.existingSecretKey]: EXISTING_SIGNING_SECRET,
    },
    [values.tls.existingSecret]: {
      'tls.crt': readFileSync(join(TLS_FIXTURES, 'server.crt'), 'utf8'),
      'tls.key': readFileSync(join(TLS_FIXTURES, 'server.key'), 'utf8'),
    },
  };
  const root = layOutPodFiles(workload.spec.template.spec, objects, existingSecrets);
  // The exporter is told --config /etc/trunk-exporter/config.yaml; its files are under root.
  const configPath = container.args[container.args.indexOf('--config') + 1] ?? '';
  const config = parse(readFileSync(join(root, configPath), 'utf8')) as unknown;
  const rooted = (node: unknown): unknown =>
    typeof node === 'string' && node.startsWith('/etc/')
      ? join(root, node)
      : Array.isArray(node)
        ? node.map(rooted)
        : isMap(node)
          ? Object.fromEntries(Object.entries(node).map(([key, value]) => [key, rooted(value)]))
          : node;
  const checked = join(root, 'checked-config.yaml');
  writeFileSync(checked, stringify(rooted(config)));
  return { config, result: await checkConfigInProcess(checked) };
}
