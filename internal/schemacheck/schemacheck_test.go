package schemacheck

import (
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestViolationsAreOrdered: the validator walks an object's properties in
// Go map order, so without ordering the same bad value gives its lines,
// and the names in one "additional properties" line, in a different order
// from one call to the next.
func TestViolationsAreOrdered(t *testing.T) {
	const schema = `{"type":"object","additionalProperties":false,"required":["id"],
	"properties":{"id":{"type":"string"},"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"},
	"list":{"type":"array","items":{"type":"integer"}}}}`
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("s.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	const value = `{"c":3,"b":2,"a":1,"z":0,"y":0,"x":0,"list":[0,"one","two",3,4,5,6,7,8,9,"ten"]}`
	want := []string{
		"at (root): missing property 'id'",
		"at (root): additional properties 'x', 'y', 'z' not allowed",
		"at /a: got number, want string",
		"at /b: got number, want string",
		"at /c: got number, want string",
		"at /list/1: got string, want integer",
		"at /list/2: got string, want integer",
		"at /list/10: got string, want integer",
	}
	for range 40 {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(value))
		if err != nil {
			t.Fatal(err)
		}
		got := Violations(sch.Validate(inst))
		if !slices.Equal(got, want) {
			t.Fatalf("Violations =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
