package main

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ghodss/yaml"
)

// Maintainer is one entry of Chart.yaml's maintainers.
type Maintainer struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
	URL   string `json:"url,omitempty"`
}

// Metadata is Chart.yaml, with the field names Helm's chart.Metadata gives templates (.Chart.Name,
// .Chart.AppVersion...). A struct, as in Helm: .Chart.Unknown is an execution error, not "".
type Metadata struct {
	Name         string            `json:"name,omitempty"`
	Home         string            `json:"home,omitempty"`
	Sources      []string          `json:"sources,omitempty"`
	Version      string            `json:"version,omitempty"`
	Description  string            `json:"description,omitempty"`
	Keywords     []string          `json:"keywords,omitempty"`
	Maintainers  []*Maintainer     `json:"maintainers,omitempty"`
	Icon         string            `json:"icon,omitempty"`
	APIVersion   string            `json:"apiVersion,omitempty"`
	Condition    string            `json:"condition,omitempty"`
	Tags         string            `json:"tags,omitempty"`
	AppVersion   string            `json:"appVersion,omitempty"`
	Deprecated   bool              `json:"deprecated,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	KubeVersion  string            `json:"kubeVersion,omitempty"`
	Dependencies []interface{}     `json:"dependencies,omitempty"`
	Type         string            `json:"type,omitempty"`
}

// TemplateFile is one file of templates/, named as Helm names it: <chart>/templates/<file>.
type TemplateFile struct {
	Name string
	Data string
}

// Chart is a chart directory loaded as Helm's loader does, for a chart without dependencies.
type Chart struct {
	Metadata  *Metadata
	Values    map[string]interface{}
	Schema    []byte
	Templates []TemplateFile
	// Every other file, by its path inside the chart (what .Files serves).
	Files map[string][]byte
}

// loadChart reads a chart directory. Subcharts (charts/, dependencies) are not supported: the chart
// under test has none, and loading fails rather than ignoring them.
func loadChart(dir string) (*Chart, error) {
	ignored, err := readHelmignore(dir)
	if err != nil {
		return nil, err
	}
	chartYaml, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return nil, err
	}
	metadata := &Metadata{}
	if err := yaml.Unmarshal(chartYaml, metadata); err != nil {
		return nil, fmt.Errorf("Chart.yaml: %w", err)
	}
	if metadata.APIVersion != "v2" {
		return nil, fmt.Errorf("Chart.yaml: apiVersion %q: only v2 charts are supported", metadata.APIVersion)
	}
	if metadata.Name == "" || metadata.Version == "" {
		return nil, fmt.Errorf("Chart.yaml: name and version are required")
	}
	if len(metadata.Dependencies) > 0 {
		return nil, fmt.Errorf("Chart.yaml: dependencies are not supported by this renderer")
	}
	chart := &Chart{Metadata: metadata, Values: map[string]interface{}{}, Files: map[string][]byte{}}
	err = filepath.WalkDir(dir, func(file string, entry fs.DirEntry, walkErr error) error {
		if walkErr != nil {
			return walkErr
		}
		relative, _ := filepath.Rel(dir, file)
		relative = filepath.ToSlash(relative)
		if relative != "." && ignored(relative, entry.IsDir()) {
			if entry.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if entry.IsDir() {
			if relative == "charts" {
				return fmt.Errorf("charts/: subcharts are not supported by this renderer")
			}
			return nil
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		switch {
		case relative == ".helmignore", relative == "Chart.yaml", relative == "Chart.lock":
		case relative == "values.yaml":
			chart.Values, err = readValues(data)
			if err != nil {
				return fmt.Errorf("values.yaml: %w", err)
			}
		case relative == "values.schema.json":
			chart.Schema = data
		case strings.HasPrefix(relative, "templates/"):
			chart.Templates = append(chart.Templates, TemplateFile{
				Name: path.Join(metadata.Name, relative),
				Data: string(data),
			})
		default:
			chart.Files[relative] = data
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(chart.Templates, func(i, j int) bool { return chart.Templates[i].Name < chart.Templates[j].Name })
	return chart, nil
}

// readHelmignore reads .helmignore's simple forms: comments, `name` and `*.ext` patterns (matched
// against each path element) and `dir/` (directories only). Anything else (`!`, `**`, a pattern
// with an inner slash) fails, rather than being read differently from Helm.
func readHelmignore(dir string) (func(relative string, isDir bool) bool, error) {
	data, err := os.ReadFile(filepath.Join(dir, ".helmignore"))
	if os.IsNotExist(err) {
		return func(string, bool) bool { return false }, nil
	} else if err != nil {
		return nil, err
	}
	type rule struct {
		pattern string
		dirOnly bool
	}
	var rules []rule
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		dirOnly := strings.HasSuffix(line, "/")
		pattern := strings.TrimSuffix(line, "/")
		if strings.HasPrefix(pattern, "!") || strings.Contains(pattern, "**") || strings.Contains(pattern, "/") {
			return nil, fmt.Errorf(".helmignore: %q: only simple patterns are supported by this renderer", line)
		}
		if _, err := path.Match(pattern, ""); err != nil {
			return nil, fmt.Errorf(".helmignore: %q: %w", line, err)
		}
		rules = append(rules, rule{pattern, dirOnly})
	}
	return func(relative string, isDir bool) bool {
		for _, rule := range rules {
			if rule.dirOnly && !isDir {
				continue
			}
			if matched, _ := path.Match(rule.pattern, path.Base(relative)); matched {
				return true
			}
		}
		return false
	}, nil
}
