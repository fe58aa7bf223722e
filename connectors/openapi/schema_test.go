package openapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSchemaConversion: OpenAPI schema objects become JSON Schema 2020-12.
func TestSchemaConversion(t *testing.T) {
	tests := []struct {
		name  string
		oas31 bool
		in    string
		want  string
	}{
		{"plain", false, `{"type":"string","minLength":1}`, `{"type":"string","minLength":1}`},
		{"nullable type", false, `{"type":"string","nullable":true}`, `{"type":["string","null"]}`},
		{"nullable enum", false, `{"type":"string","enum":["a"],"nullable":true}`, `{"type":["string","null"],"enum":["a",null]}`},
		{"nullable without type", false, `{"allOf":[{"type":"object"}],"nullable":true}`, `{"anyOf":[{"allOf":[{"type":"object"}]},{"type":"null"}]}`},
		{"x-nullable", false, `{"type":"integer","x-nullable":true}`, `{"type":["integer","null"]}`},
		{"nullable ref", false, `{"$ref":"#/components/schemas/A","nullable":true}`, `{"anyOf":[{"$ref":"#/components/schemas/A"},{"type":"null"}]}`},
		{"ref with description", false, `{"$ref":"#/components/schemas/A","description":"d","minLength":3}`, `{"$ref":"#/components/schemas/A","description":"d"}`},
		{"3.1 ref siblings", true, `{"$ref":"#/components/schemas/A","description":"d","minLength":3}`, `{"$ref":"#/components/schemas/A","description":"d","minLength":3}`},
		{"exclusive booleans", false, `{"type":"number","minimum":1,"exclusiveMinimum":true,"maximum":9,"exclusiveMaximum":false}`, `{"type":"number","exclusiveMinimum":1,"maximum":9}`},
		{"exclusive numbers", true, `{"type":"number","exclusiveMinimum":0}`, `{"type":"number","exclusiveMinimum":0}`},
		{"file", false, `{"type":"file"}`, `{"type":"string","format":"binary"}`},
		{"items list", false, `{"type":"array","items":[{"type":"string"}]}`, `{"type":"array","prefixItems":[{"type":"string"}]}`},
		{"dropped keywords", false, `{"type":"object","example":{"a":1},"xml":{},"discriminator":{"propertyName":"k"},"x-go":1,"externalDocs":{}}`, `{"type":"object"}`},
		{"wrong keyword types", false, `{"type":"strng","minimum":"1","required":true,"enum":"a","properties":[1]}`, `{}`},
		{"property named like keywords", false, `{"properties":{"example":{"type":"string"},"$ref":{"type":"number"}}}`, `{"properties":{"example":{"type":"string"},"$ref":{"type":"number"}}}`},
		{"boolean schemas", true, `{"additionalProperties":false,"items":true}`, `{"additionalProperties":false,"items":true}`},
		{"inline local ref", false, `{"$ref":"#/paths/~1x/get/parameters/0/schema"}`, `{"type":"integer"}`},
		{"missing shared schema", false, `{"$ref":"#/components/schemas/Nope"}`, `{}`},
		{"external ref", false, `{"$ref":"other.yaml#/A"}`, `{}`},
		{"type list", true, `{"type":["string","null","bogus","string"]}`, `{"type":["string","null"]}`},
	}
	doc := `{"openapi":"3.0.0","paths":{"/x":{"get":{"parameters":[{"schema":{"type":"integer"}}]}}},"components":{"schemas":{"A":{"type":"string"}}}}`
	root, ok := parseJSON([]byte(doc))
	if !ok {
		t.Fatal("bad test document")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var warnings []string
			c := &schemaConv{doc: &root, components: root.get("components").get("schemas"), defsPtr: "/components/schemas/", oas31: tt.oas31,
				warn: func(w string) { warnings = append(warnings, w) }, stopped: func() bool { return false }}
			n, ok := parseJSON([]byte(tt.in))
			if !ok {
				t.Fatal("bad input")
			}
			got := string(c.schema(nil, &n, 0))
			if !json.Valid([]byte(got)) {
				t.Fatalf("invalid JSON %s", got)
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			unresolvable := strings.Contains(tt.name, "missing") || strings.Contains(tt.name, "external")
			if unresolvable != (len(warnings) > 0) {
				t.Errorf("warnings %q", warnings)
			}
		})
	}
}

// TestSchemaPlaces: a reference to a place that is not a shared schema
// and refers to others becomes a shared schema named after its place (a
// cycle among such places is a recursive type, not an endless copy); one
// without references is copied in place.
func TestSchemaPlaces(t *testing.T) {
	doc := `{"openapi":"3.0.0","x-a":{"type":"object","properties":{"next":{"$ref":"#/x-a"}}},
		"components":{"schemas":{"X":{"properties":{"y":{"properties":{"z":{"$ref":"#/components/schemas/X/properties/y"}}},"w":{"type":"string"}}}}}}`
	root, ok := parseJSON([]byte(doc))
	if !ok {
		t.Fatal("bad test document")
	}
	c := &schemaConv{doc: &root, components: root.get("components").get("schemas"), defsPtr: "/components/schemas/", warn: func(w string) { t.Error(w) }, stopped: func() bool { return false }}
	tests := []struct{ ref, want, name, def string }{
		{"#/x-a", `{"$ref":"#/components/schemas/x-a"}`, "x-a", `{"type":"object","properties":{"next":{"$ref":"#/components/schemas/x-a"}}}`},
		{"#/components/schemas/X/properties/y", `{"$ref":"#/components/schemas/X.properties.y"}`, "X.properties.y",
			`{"properties":{"z":{"$ref":"#/components/schemas/X.properties.y"}}}`},
		{"#/components/schemas/X/properties/w", `{"type":"string"}`, "", ""},
	}
	for _, tt := range tests {
		n, _ := parseJSON([]byte(`{"$ref":"` + tt.ref + `"}`))
		if got := string(c.schema(nil, &n, 0)); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.ref, got, tt.want)
		}
		if tt.name == "" {
			continue
		}
		if got := string(c.schema(nil, c.shared(tt.name), 0)); got != tt.def {
			t.Errorf("shared %s: got %s, want %s", tt.name, got, tt.def)
		}
	}
}
