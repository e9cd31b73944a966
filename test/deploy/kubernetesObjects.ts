// Kubernetes' own rules for the objects a chart renders: each kind's OpenAPI schema (the
// kubernetes-models packages), object names, and label selectors.
import {
  PrometheusRule,
  ServiceMonitor,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1';
import { ConfigMap, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { httpRouteProblems } from './gatewayApi.js';

/** Any Kubernetes object, as far as these checks read it. */
export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly [key: string]: unknown;
}

interface Validatable {
  validate(): void;
}

/** The model of each apiVersion/kind the chart may render; any other is an error. */
const MODELS: Readonly<Record<string, (data: never) => Validatable>> = {
  'v1/ConfigMap': (data) => new ConfigMap(data),
  'v1/Secret': (data) => new Secret(data),
  'v1/Service': (data) => new Service(data),
  'v1/ServiceAccount': (data) => new ServiceAccount(data),
  'apps/v1/Deployment': (data) => new Deployment(data),
  'apps/v1/StatefulSet': (data) => new StatefulSet(data),
  'monitoring.coreos.com/v1/ServiceMonitor': (data) => new ServiceMonitor(data),
  'monitoring.coreos.com/v1/PrometheusRule': (data) => new PrometheusRule(data),
  'networking.k8s.io/v1/Ingress': (data) => new Ingress(data),
  'gateway.networking.k8s.io/v1/HTTPRoute': (data) => ({
    validate() {
      const problems = httpRouteProblems(data);
      if (problems.length > 0) throw new Error(problems.join('; '));
    },
  }),
};

/** Why Kubernetes would reject the object's shape ([] when its schema accepts it). */
export function schemaProblems(object: unknown): string[] {
  if (typeof object !== 'object' || object === null) return ['not an object (an empty document?)'];
  const { apiVersion, kind } = object as Partial<KubeObject>;
  const model = MODELS[`${String(apiVersion)}/${String(kind)}`];
  if (model === undefined) return [`no schema for ${String(apiVersion)} ${String(kind)}`];
  try {
    model(object as never).validate();
    return [];
  } catch (error) {
    return [(error as Error).message];
  }
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Why the API server (or, for a StatefulSet, its controller) would refuse the object's name: a
 * Service's is a DNS-1035 label, a workload's and a ConfigMap's a DNS-1123 label or subdomain, all
 * at most 63 characters here since they become label values and DNS names. A StatefulSet's pods
 * carry `controller-revision-hash: <name>-<10 characters>`, a label value: so at most 52.
 */
export function nameProblems(object: KubeObject): string[] {
  const { kind } = object;
  const { name } = object.metadata;
  const problems: string[] = [];
  const pattern =
    kind === 'Service' ? DNS1035_LABEL : kind === 'StatefulSet' ? DNS1123_LABEL : DNS1123_SUBDOMAIN;
  if (!pattern.test(name)) problems.push(`${kind} ${name}: not a valid name (${String(pattern)})`);
  if (name.length > 63) problems.push(`${kind} ${name}: ${name.length} characters, over 63`);
  if (kind === 'StatefulSet' && name.length > 52) {
    problems.push(
      `StatefulSet ${name}: ${name.length} characters, over 52 (its pods' controller-revision-hash label would exceed 63)`,
    );
  }
  return problems;
}

/** A label selector, as matchLabels and matchExpressions. */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly {
    readonly key: string;
    readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
    readonly values?: readonly string[];
  }[];
}

/** Whether a label selector selects an object with these labels, as Kubernetes evaluates it. */
export function selects(
  selector: LabelSelector,
  labels: Readonly<Record<string, string>> = {},
): boolean {
  const matchLabels = Object.entries(selector.matchLabels ?? {});
  const expressions = selector.matchExpressions ?? [];
  if (matchLabels.length === 0 && expressions.length === 0) return true;
  return (
    matchLabels.every(([key, value]) => labels[key] === value) &&
    expressions.every(({ key, operator, values = [] }) => {
      const value = labels[key];
      switch (operator) {
        case 'In':
          return value !== undefined && values.includes(value);
        case 'NotIn':
          return value === undefined || !values.includes(value);
        case 'Exists':
          return value !== undefined;
        case 'DoesNotExist':
          return value === undefined;
      }
    })
  );
}
