package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"github.com/ghodss/yaml"
)

// The depth at which include of the same template stops, as in Helm.
const includeDepthLimit = 1000

// Helm wraps `required` messages in these markers so its error cleanup can find them.
const (
	warnStart = "HELM_ERR_START"
	warnEnd   = "HELM_ERR_END"
)

var warnPattern = regexp.MustCompile(warnStart + `(.*)` + warnEnd)

// renderTemplates renders every template that is not a partial (a base name starting with "_"),
// with all of them parsed into one set so that each can include the others' defines.
func renderTemplates(templates []TemplateFile, top map[string]interface{}, basePath string) (map[string]string, error) {
	set, err := parseSet(templates)
	if err != nil {
		return nil, err
	}
	rendered := map[string]string{}
	for _, file := range sortedByDepth(templates) {
		if strings.HasPrefix(path.Base(file.Name), "_") {
			continue
		}
		top["Template"] = map[string]interface{}{"Name": file.Name, "BasePath": basePath}
		var out strings.Builder
		if err := set.ExecuteTemplate(&out, file.Name, top); err != nil {
			return nil, cleanExecError(file.Name, err)
		}
		// missingkey=zero still prints "<no value>" for a missing key of a map of interface{}.
		rendered[file.Name] = strings.ReplaceAll(out.String(), "<no value>", "")
	}
	return rendered, nil
}

// parseSet parses templates into one set, in Helm's order (shallower paths first, then by name),
// with Helm's functions bound to that set.
func parseSet(templates []TemplateFile) (*template.Template, error) {
	set := template.New("gotpl").Option("missingkey=zero")
	set.Funcs(functions(set, templates))
	for _, file := range sortedByDepth(templates) {
		if _, err := set.New(file.Name).Parse(file.Data); err != nil {
			return nil, cleanParseError(file.Name, err)
		}
	}
	return set, nil
}

func sortedByDepth(templates []TemplateFile) []TemplateFile {
	sorted := append([]TemplateFile(nil), templates...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i].Name, sorted[j].Name
		depthA, depthB := strings.Count(a, "/"), strings.Count(b, "/")
		if depthA != depthB {
			return depthA < depthB
		}
		return a < b
	})
	return sorted
}

// functions is Helm's function map: sprig's text functions without env and expandenv, Helm's own,
// and include/tpl bound to the template set.
func functions(set *template.Template, templates []TemplateFile) template.FuncMap {
	funcs := template.FuncMap(sprig.TxtFuncMap())
	delete(funcs, "env")
	delete(funcs, "expandenv")

	depth := map[string]int{}
	funcs["include"] = func(name string, data interface{}) (string, error) {
		if depth[name] > includeDepthLimit {
			return "", fmt.Errorf("rendering template has a nested reference name: %s: unable to execute template", name)
		}
		depth[name]++
		defer func() { depth[name]-- }()
		var out strings.Builder
		err := set.ExecuteTemplate(&out, name, data)
		return out.String(), err
	}
	funcs["tpl"] = func(text string, top map[string]interface{}) (string, error) {
		current, _ := top["Template"].(map[string]interface{})
		name, _ := current["Name"].(string)
		basePath, _ := current["BasePath"].(string)
		if name == "" {
			return "", fmt.Errorf("cannot retrieve Template.Name from values inside tpl function: %s", text)
		}
		// A fresh set: the chart's templates plus the text under the current template's name
		// (text/template cannot clone a set that has run).
		others := make([]TemplateFile, 0, len(templates))
		for _, file := range templates {
			if file.Name != name {
				others = append(others, file)
			}
		}
		inner, err := parseSet(others)
		if err != nil {
			return "", err
		}
		if _, err := inner.New(name).Parse(text); err != nil {
			return "", fmt.Errorf("error during tpl function execution for %q: %w", text, cleanParseError(name, err))
		}
		top["Template"] = map[string]interface{}{"Name": name, "BasePath": basePath}
		var out strings.Builder
		if err := inner.ExecuteTemplate(&out, name, top); err != nil {
			return "", fmt.Errorf("error during tpl function execution for %q: %w", text, cleanExecError(name, err))
		}
		return strings.ReplaceAll(out.String(), "<no value>", ""), nil
	}
	funcs["required"] = func(message string, value interface{}) (interface{}, error) {
		if value == nil {
			return value, errors.New(warnStart + message + warnEnd)
		}
		if text, ok := value.(string); ok && text == "" {
			return value, errors.New(warnStart + message + warnEnd)
		}
		return value, nil
	}
	// `helm template` and `helm install --dry-run` have no cluster: lookup finds nothing.
	funcs["lookup"] = func(apiVersion, kind, namespace, name string) (map[string]interface{}, error) {
		return map[string]interface{}{}, nil
	}
	funcs["toYaml"] = func(value interface{}) string {
		data, err := yaml.Marshal(value)
		if err != nil {
			return ""
		}
		return strings.TrimSuffix(string(data), "\n")
	}
	funcs["mustToYaml"] = func(value interface{}) (string, error) {
		data, err := yaml.Marshal(value)
		return strings.TrimSuffix(string(data), "\n"), err
	}
	funcs["fromYaml"] = func(text string) map[string]interface{} {
		out := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(text), &out); err != nil {
			out["Error"] = err.Error()
		}
		return out
	}
	funcs["fromYamlArray"] = func(text string) []interface{} {
		out := []interface{}{}
		if err := yaml.Unmarshal([]byte(text), &out); err != nil {
			out = []interface{}{err.Error()}
		}
		return out
	}
	funcs["toJson"] = func(value interface{}) string {
		data, err := json.Marshal(value)
		if err != nil {
			return ""
		}
		return string(data)
	}
	funcs["mustToJson"] = func(value interface{}) (string, error) {
		data, err := json.Marshal(value)
		return string(data), err
	}
	funcs["fromJson"] = func(text string) map[string]interface{} {
		out := map[string]interface{}{}
		if err := json.Unmarshal([]byte(text), &out); err != nil {
			out["Error"] = err.Error()
		}
		return out
	}
	funcs["fromJsonArray"] = func(text string) []interface{} {
		out := []interface{}{}
		if err := json.Unmarshal([]byte(text), &out); err != nil {
			out = []interface{}{err.Error()}
		}
		return out
	}
	return funcs
}

// cleanParseError words a parse error as Helm does: "parse error at (file:line): message".
func cleanParseError(name string, err error) error {
	tokens := strings.Split(err.Error(), ": ")
	if len(tokens) == 1 {
		return fmt.Errorf("parse error in (%s): %s", name, err)
	}
	return fmt.Errorf("parse error at (%s): %s", tokens[1], tokens[len(tokens)-1])
}

// cleanExecError words an execution error as Helm does; `required` and `fail` give their message.
func cleanExecError(name string, err error) error {
	var execError template.ExecError
	if !errors.As(err, &execError) {
		return err
	}
	tokens := strings.SplitN(err.Error(), ": ", 3)
	if len(tokens) != 3 {
		return fmt.Errorf("execution error in (%s): %s", name, err)
	}
	if parts := warnPattern.FindStringSubmatch(tokens[2]); len(parts) >= 2 {
		return fmt.Errorf("execution error at (%s): %s", tokens[1], parts[1])
	}
	return err
}
