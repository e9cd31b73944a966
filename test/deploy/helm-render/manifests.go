package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/ghodss/yaml"
)

// Manifest is one YAML document of a rendered template, as JSON (the form the API server gets).
type Manifest struct {
	Source string          `json:"source"`
	Text   string          `json:"text"`
	Object json.RawMessage `json:"object"`
}

// Helm's releaseutil.SplitManifests separator.
var documentSeparator = regexp.MustCompile(`(?:^|\s*\n)---\s*`)

// installOrder is Helm's releaseutil.InstallOrder: the order of kinds in its output.
var installOrder = []string{
	"PriorityClass", "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
	"PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass",
	"PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole",
	"ClusterRoleList", "ClusterRoleBinding", "ClusterRoleBindingList", "Role", "RoleList",
	"RoleBinding", "RoleBindingList", "Service", "DaemonSet", "Pod", "ReplicationController",
	"ReplicaSet", "Deployment", "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob",
	"IngressClass", "Ingress", "APIService",
}

// splitManifests turns rendered templates into manifests: one per non-blank YAML document, each
// parsed as Helm and the API server parse it (YAML 1.1 through JSON). A document that does not
// parse is an error naming its template, as `helm install` reports it.
func splitManifests(rendered map[string]string) ([]Manifest, error) {
	names := make([]string, 0, len(rendered))
	for name := range rendered {
		names = append(names, name)
	}
	sort.Strings(names)
	var manifests []Manifest
	for _, name := range names {
		if strings.TrimSpace(rendered[name]) == "" {
			continue
		}
		for _, document := range documentSeparator.Split(rendered[name], -1) {
			if strings.TrimSpace(document) == "" {
				continue
			}
			object, err := yaml.YAMLToJSON([]byte(document))
			if err != nil {
				return nil, fmt.Errorf("YAML parse error on %s: %w", name, err)
			}
			manifests = append(manifests, Manifest{Source: name, Text: document, Object: object})
		}
	}
	rank := func(manifest Manifest) (int, string) {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(manifest.Object, &head)
		for index, kind := range installOrder {
			if kind == head.Kind {
				return index, head.Metadata.Name
			}
		}
		return len(installOrder), head.Kind + "/" + head.Metadata.Name
	}
	sort.SliceStable(manifests, func(i, j int) bool {
		rankI, nameI := rank(manifests[i])
		rankJ, nameJ := rank(manifests[j])
		if rankI != rankJ {
			return rankI < rankJ
		}
		return nameI < nameJ
	})
	return manifests, nil
}
