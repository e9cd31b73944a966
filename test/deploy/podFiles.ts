// A rendered pod's files laid out under a temporary root, as the kubelet mounts them: ConfigMaps
// and Secrets the chart renders, stand-ins for Secrets it only names, emptyDirs.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { KubeObject } from './kubernetesObjects.js';

/** A pod spec's volumes and one container's mounts, as far as the layout reads them. */
export interface PodSpec {
  readonly volumes?: readonly {
    readonly name: string;
    readonly configMap?: { readonly name: string; readonly items?: readonly KeyToPath[] };
    readonly secret?: { readonly secretName: string; readonly items?: readonly KeyToPath[] };
    readonly emptyDir?: object;
  }[];
  readonly containers: readonly {
    readonly volumeMounts?: readonly {
      readonly name: string;
      readonly mountPath: string;
      readonly subPath?: string;
    }[];
  }[];
}
interface KeyToPath {
  readonly key: string;
  readonly path: string;
}

/**
 * Lays out the first container's mounts under a new temporary root and returns the root. A Secret
 * the chart does not render comes from `existingSecrets` (name → key → content); a volume whose
 * source is missing throws, as the pod would never start.
 */
export function layOutPodFiles(
  pod: PodSpec,
  objects: readonly KubeObject[],
  existingSecrets: Readonly<Record<string, Readonly<Record<string, string>>>>,
): string {
  const root = mkdtempSync(join(tmpdir(), 'trunk-exporter-pod-'));
  const find = (kind: string, name: string) =>
    objects.find((object) => object.kind === kind && object.metadata.name === name);
  for (const mount of pod.containers[0]?.volumeMounts ?? []) {
    const volume = pod.volumes?.find((candidate) => candidate.name === mount.name);
    if (volume === undefined) throw new Error(`volumeMount ${mount.name} has no volume`);
    let files: Readonly<Record<string, string>>;
    let items: readonly KeyToPath[] | undefined;
    if (volume.configMap) {
      const configMap = find('ConfigMap', volume.configMap.name);
      if (configMap === undefined) throw new Error(`no ConfigMap ${volume.configMap.name}`);
      files = (configMap.data ?? {}) as Record<string, string>;
      items = volume.configMap.items;
    } else if (volume.secret) {
      const secret = find('Secret', volume.secret.secretName);
      const existing = existingSecrets[volume.secret.secretName];
      if (secret !== undefined) {
        const data = (secret.data ?? {}) as Record<string, string>;
        files = Object.fromEntries(
          Object.entries(data).map(([key, value]) => [
            key,
            Buffer.from(value, 'base64').toString(),
          ]),
        );
      } else if (existing !== undefined) {
        files = existing;
      } else {
        throw new Error(`no Secret ${volume.secret.secretName}`);
      }
      items = volume.secret.items;
    } else if (volume.emptyDir) {
      mkdirSync(join(root, mount.mountPath), { recursive: true });
      continue;
    } else {
      throw new Error(`volume ${volume.name}: a kind of volume this layout does not know`);
    }
    const paths = (items ?? Object.keys(files).map((key) => ({ key, path: key }))).map(
      ({ key, path }) => {
        const content = files[key];
        if (content === undefined) throw new Error(`volume ${volume.name} has no key ${key}`);
        return { path, content };
      },
    );
    for (const { path, content } of paths) {
      if (mount.subPath !== undefined && mount.subPath !== path) continue;
      const target =
        mount.subPath === undefined
          ? join(root, mount.mountPath, path)
          : join(root, mount.mountPath);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, content);
    }
  }
  return root;
}
