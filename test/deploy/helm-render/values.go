package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ghodss/yaml"
	"github.com/xeipuuv/gojsonschema"
)

// readValues parses a values file as Helm's chartutil.ReadValues does: YAML through JSON, so every
// number is a float64 and YAML 1.1 scalars (yes, on) are booleans.
func readValues(data []byte) (map[string]interface{}, error) {
	values := map[string]interface{}{}
	if err := yaml.Unmarshal(data, &values); err != nil {
		return nil, err
	}
	if values == nil {
		values = map[string]interface{}{}
	}
	return values, nil
}

// mergeUserValues merges -f files in order, as `helm install -f a -f b`: a later file's maps merge
// into an earlier one's, anything else replaces. Nulls stay, for coalesce to act on.
func mergeUserValues(base, override map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(base))
	for key, value := range base {
		out[key] = value
	}
	for key, value := range override {
		if overrideMap, ok := value.(map[string]interface{}); ok {
			if baseMap, ok := out[key].(map[string]interface{}); ok {
				out[key] = mergeUserValues(baseMap, overrideMap)
				continue
			}
		}
		out[key] = value
	}
	return out
}

// coalesce fills the user's values with the chart's defaults, as Helm's chartutil.CoalesceValues:
// the user's value wins; maps merge; a user's null deletes the chart's key.
func coalesce(user, defaults map[string]interface{}, prefix string, warn func(string)) map[string]interface{} {
	if user == nil {
		user = map[string]interface{}{}
	}
	for key, defaultValue := range defaults {
		fullKey := strings.TrimPrefix(prefix+"."+key, ".")
		userValue, present := user[key]
		switch {
		case !present:
			user[key] = deepCopy(defaultValue)
		case userValue == nil:
			delete(user, key)
		default:
			userMap, userIsMap := userValue.(map[string]interface{})
			defaultMap, defaultIsMap := defaultValue.(map[string]interface{})
			if userIsMap && defaultIsMap {
				coalesce(userMap, defaultMap, fullKey, warn)
			} else if userIsMap && defaultValue != nil {
				warn(fmt.Sprintf("warning: skipped value for %s: Not a table.", fullKey))
			} else if defaultIsMap {
				warn(fmt.Sprintf("warning: destination for %s is a table. Ignoring non-table value (%v)", fullKey, userValue))
			}
		}
	}
	return user
}

func deepCopy(value interface{}) interface{} {
	switch typed := value.(type) {
	case map[string]interface{}:
		out := make(map[string]interface{}, len(typed))
		for key, item := range typed {
			out[key] = deepCopy(item)
		}
		return out
	case []interface{}:
		out := make([]interface{}, len(typed))
		for index, item := range typed {
			out[index] = deepCopy(item)
		}
		return out
	default:
		return value
	}
}

// validateValues checks the coalesced values against values.schema.json with gojsonschema, the
// validator of Helm 3, and words the failure as Helm does.
func validateValues(chartName string, values map[string]interface{}, schema []byte) error {
	if schema == nil {
		return nil
	}
	valuesYaml, err := yaml.Marshal(values)
	if err != nil {
		return err
	}
	valuesJSON, err := yaml.YAMLToJSON(valuesYaml)
	if err != nil {
		return err
	}
	if bytes.Equal(valuesJSON, []byte("null")) {
		valuesJSON = []byte("{}")
	}
	result, err := gojsonschema.Validate(gojsonschema.NewBytesLoader(schema), gojsonschema.NewBytesLoader(valuesJSON))
	if err != nil {
		return fmt.Errorf("values.schema.json: %w", err)
	}
	if result.Valid() {
		return nil
	}
	var message strings.Builder
	for _, problem := range result.Errors() {
		fmt.Fprintf(&message, "- %s\n", problem)
	}
	return fmt.Errorf("values don't meet the specifications of the schema(s) in the following chart(s):\n%s:\n%s", chartName, message.String())
}
