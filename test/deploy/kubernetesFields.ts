// Fields Kubernetes does not know. The models' validate() checks types and required fields but lets
// an unknown or misplaced field through, which `helm install` (strict field validation) rejects and
// which is the usual sign of a wrong indent. TypeScript's excess-property check on the models'
// declared types finds them: each object becomes an object literal of its kind's interface.
import { join } from 'node:path';
import ts from 'typescript';
import type { KubeObject } from './kubernetesObjects.js';

/** Where each kind's interface is declared, and its name. */
const TYPES: Readonly<Record<string, readonly [module: string, type: string]>> = {
  'v1/ConfigMap': ['kubernetes-models/v1/ConfigMap', 'IConfigMap'],
  'v1/Secret': ['kubernetes-models/v1/Secret', 'ISecret'],
  'v1/Service': ['kubernetes-models/v1/Service', 'IService'],
  'v1/ServiceAccount': ['kubernetes-models/v1/ServiceAccount', 'IServiceAccount'],
  'apps/v1/Deployment': ['kubernetes-models/apps/v1/Deployment', 'IDeployment'],
  'apps/v1/StatefulSet': ['kubernetes-models/apps/v1/StatefulSet', 'IStatefulSet'],
  'networking.k8s.io/v1/Ingress': ['kubernetes-models/networking.k8s.io/v1/Ingress', 'IIngress'],
  'monitoring.coreos.com/v1/ServiceMonitor': [
    '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor',
    'IServiceMonitor',
  ],
  'monitoring.coreos.com/v1/PrometheusRule': [
    '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule',
    'IPrometheusRule',
  ],
};

/**
 * Fields of each object that its kind does not have, as "LABEL: message"; `labels[i]` names
 * objects[i] in the messages. Objects of a kind without a declared type are left to
 * schemaProblems, which reports them (the HTTPRoute's stand-in schema is strict itself).
 */
export function unknownFieldProblems(
  objects: readonly KubeObject[],
  labels: readonly string[],
): string[] {
  const file = join(import.meta.dirname, '__rendered-objects__.ts');
  const lines: string[] = [];
  const lineLabels: string[] = [];
  objects.forEach((object, index) => {
    const type = TYPES[`${object.apiVersion}/${object.kind}`];
    if (type === undefined) return;
    lines.push(`import type { ${type[1]} as T${index} } from '${type[0]}';`);
  });
  objects.forEach((object, index) => {
    if (TYPES[`${object.apiVersion}/${object.kind}`] === undefined) return;
    // One line per object, so a diagnostic's line names its object.
    lineLabels[lines.length] = labels[index] ?? String(index);
    lines.push(`export const object${index}: T${index} = ${JSON.stringify(object)};`);
  });
  const source = lines.join('\n');
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    lib: ['lib.es2023.d.ts'],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    name === file
      ? ts.createSourceFile(name, source, language)
      : getSourceFile(name, language, ...rest);
  host.fileExists = (name) => name === file || fileExists(name);
  host.readFile = (name) => (name === file ? source : readFile(name));
  const program = ts.createProgram([file], options, host);
  const sourceFile = program.getSourceFile(file);
  return [
    ...program.getSemanticDiagnostics(sourceFile),
    ...program.getSyntacticDiagnostics(sourceFile),
  ].map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (diagnostic.file === undefined || diagnostic.start === undefined) return message;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return `${lineLabels[line] ?? `line ${line}`}: ${message}`;
  });
}
