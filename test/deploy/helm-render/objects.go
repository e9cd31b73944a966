package main

import (
	"path"
	"strings"
)

// KubeVersion is .Capabilities.KubeVersion (Version "v1.30.0", Major "1", Minor "30").
type KubeVersion struct {
	Version string
	Major   string
	Minor   string
}

// String is what {{ .Capabilities.KubeVersion }} prints, as in Helm.
func (k KubeVersion) String() string { return k.Version }

// GitVersion is Helm's deprecated alias of Version.
func (k KubeVersion) GitVersion() string { return k.Version }

// VersionSet is .Capabilities.APIVersions: "group/version" and "group/version/Kind" entries.
type VersionSet []string

// Has reports whether the cluster serves an API version (or a version's kind).
func (v VersionSet) Has(apiVersion string) bool {
	for _, candidate := range v {
		if candidate == apiVersion {
			return true
		}
	}
	return false
}

// HelmVersion is .Capabilities.HelmVersion.
type HelmVersion struct {
	Version      string
	GitCommit    string
	GitTreeState string
	GoVersion    string
}

// Capabilities is .Capabilities: what `helm template` assumes of the cluster, or what the
// --kube-version and --api-versions flags say.
type Capabilities struct {
	APIVersions VersionSet
	KubeVersion KubeVersion
	HelmVersion HelmVersion
}

// builtinAPIVersions are the group versions a Kubernetes 1.30 API server serves, with the kinds a
// chart commonly tests for. Helm's default set is every version and kind its client library knows.
var builtinAPIVersions = []string{
	"v1", "v1/ConfigMap", "v1/Secret", "v1/Service", "v1/ServiceAccount", "v1/Pod",
	"v1/PersistentVolumeClaim", "v1/Namespace",
	"apps/v1", "apps/v1/Deployment", "apps/v1/StatefulSet", "apps/v1/DaemonSet", "apps/v1/ReplicaSet",
	"batch/v1", "batch/v1/Job", "batch/v1/CronJob",
	"autoscaling/v1", "autoscaling/v2", "autoscaling/v2/HorizontalPodAutoscaler",
	"networking.k8s.io/v1", "networking.k8s.io/v1/Ingress", "networking.k8s.io/v1/IngressClass",
	"networking.k8s.io/v1/NetworkPolicy",
	"policy/v1", "policy/v1/PodDisruptionBudget",
	"rbac.authorization.k8s.io/v1", "storage.k8s.io/v1", "scheduling.k8s.io/v1", "node.k8s.io/v1",
	"coordination.k8s.io/v1", "discovery.k8s.io/v1", "events.k8s.io/v1", "certificates.k8s.io/v1",
	"admissionregistration.k8s.io/v1", "apiextensions.k8s.io/v1", "apiregistration.k8s.io/v1",
	"authentication.k8s.io/v1", "authorization.k8s.io/v1", "flowcontrol.apiserver.k8s.io/v1",
}

// Files is .Files: the chart's files outside templates/, by path inside the chart.
type Files map[string][]byte

// Get is a file's text, or "" for a file the chart does not have (as in Helm).
func (f Files) Get(name string) string { return string(f[name]) }

// GetBytes is a file's bytes, or nil.
func (f Files) GetBytes(name string) []byte { return f[name] }

// Lines is a file's lines.
func (f Files) Lines(name string) []string {
	data, ok := f[name]
	if !ok {
		return []string{}
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// Glob is the files whose path matches a pattern (path.Match syntax; Helm uses gobwas/glob, which
// also lets ** cross directories).
func (f Files) Glob(pattern string) Files {
	out := Files{}
	for name, data := range f {
		if matched, _ := path.Match(pattern, name); matched {
			out[name] = data
		}
	}
	return out
}
