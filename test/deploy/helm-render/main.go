// Command helm-render renders a Helm 3 chart as `helm template` does, with the libraries Helm
// itself uses (text/template, sprig v3, ghodss/yaml, gojsonschema), for a machine with no helm
// binary. README.md says where it differs from Helm.
//
//	helm-render [--release-name N] [--namespace NS] [--kube-version V] [--api-versions G/V]...
//	            [-f values.yaml]... [--output json|yaml] CHART_DIR
//
// json (the default) prints {"manifests": [{source, text, object}], "notes": "..."}; yaml prints
// what `helm template` prints. Any failure helm would report exits 1 with its message on stderr.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/Masterminds/semver"
)

type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

type options struct {
	chartDir    string
	releaseName string
	namespace   string
	kubeVersion string
	apiVersions []string
	valueFiles  []string
	output      string
}

// Rendered is what `helm template` produces: the manifests and, apart, NOTES.txt.
type Rendered struct {
	Manifests []Manifest `json:"manifests"`
	Notes     string     `json:"notes"`
}

func main() {
	var opts options
	var valueFiles, apiVersions repeated
	flag.StringVar(&opts.releaseName, "release-name", "release-name", "the release's name (.Release.Name)")
	flag.StringVar(&opts.namespace, "namespace", "default", "the release's namespace (.Release.Namespace)")
	flag.StringVar(&opts.kubeVersion, "kube-version", "v1.30.0", "the cluster's version (.Capabilities.KubeVersion)")
	flag.Var(&apiVersions, "api-versions", "an API version the cluster serves, besides the built-in ones (repeatable)")
	flag.Var(&valueFiles, "f", "a values file (repeatable; later files win)")
	flag.Var(&valueFiles, "values", "same as -f")
	flag.StringVar(&opts.output, "output", "json", "json or yaml")
	flag.Parse()
	if flag.NArg() != 1 || (opts.output != "json" && opts.output != "yaml") {
		fmt.Fprintln(os.Stderr, "usage: helm-render [flags] CHART_DIR")
		flag.PrintDefaults()
		os.Exit(2)
	}
	opts.chartDir = flag.Arg(0)
	opts.valueFiles = valueFiles
	opts.apiVersions = apiVersions

	rendered, err := render(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: %s\n", err)
		os.Exit(1)
	}
	if opts.output == "yaml" {
		for _, manifest := range rendered.Manifests {
			fmt.Printf("---\n# Source: %s\n%s\n", manifest.Source, strings.TrimSpace(manifest.Text))
		}
		return
	}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", "  ")
	if err := encoder.Encode(rendered); err != nil {
		fmt.Fprintf(os.Stderr, "Error: %s\n", err)
		os.Exit(1)
	}
}

func render(opts options) (*Rendered, error) {
	chart, err := loadChart(opts.chartDir)
	if err != nil {
		return nil, err
	}
	user := map[string]interface{}{}
	for _, file := range opts.valueFiles {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		values, err := readValues(data)
		if err != nil {
			return nil, fmt.Errorf("failed to parse %s: %w", file, err)
		}
		user = mergeUserValues(user, values)
	}
	values := coalesce(user, chart.Values, "", func(warning string) { fmt.Fprintln(os.Stderr, warning) })
	if err := validateValues(chart.Metadata.Name, values, chart.Schema); err != nil {
		return nil, err
	}

	capabilities, err := newCapabilities(opts.kubeVersion, opts.apiVersions)
	if err != nil {
		return nil, err
	}
	if constraint := chart.Metadata.KubeVersion; constraint != "" {
		compatible, err := semver.NewConstraint(constraint)
		if err != nil {
			return nil, fmt.Errorf("Chart.yaml: kubeVersion %q: %w", constraint, err)
		}
		version, _ := semver.NewVersion(capabilities.KubeVersion.Version)
		if !compatible.Check(version) {
			return nil, fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", constraint, capabilities.KubeVersion.Version)
		}
	}

	top := map[string]interface{}{
		"Values": values,
		"Release": map[string]interface{}{
			"Name": opts.releaseName, "Namespace": opts.namespace, "Revision": 1,
			"IsUpgrade": false, "IsInstall": true, "Service": "Helm",
		},
		"Chart":        chart.Metadata,
		"Files":        Files(chart.Files),
		"Capabilities": capabilities,
	}
	basePath := path.Join(chart.Metadata.Name, "templates")
	files, err := renderTemplates(chart.Templates, top, basePath)
	if err != nil {
		return nil, err
	}
	rendered := &Rendered{}
	for name, text := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			if name == path.Join(basePath, "NOTES.txt") {
				rendered.Notes = text
			}
			delete(files, name)
		}
	}
	rendered.Manifests, err = splitManifests(files)
	if err != nil {
		return nil, err
	}
	return rendered, nil
}

func newCapabilities(kubeVersion string, extraAPIVersions []string) (*Capabilities, error) {
	version, err := semver.NewVersion(kubeVersion)
	if err != nil {
		return nil, fmt.Errorf("--kube-version %q: %w", kubeVersion, err)
	}
	return &Capabilities{
		APIVersions: append(append(VersionSet{}, builtinAPIVersions...), extraAPIVersions...),
		KubeVersion: KubeVersion{
			Version: "v" + version.String(),
			Major:   fmt.Sprint(version.Major()),
			Minor:   fmt.Sprint(version.Minor()),
		},
		HelmVersion: HelmVersion{Version: "v3.15.0", GoVersion: "go1.19"},
	}, nil
}
