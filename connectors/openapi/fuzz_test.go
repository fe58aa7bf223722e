package openapi

import (
	"context"
	"encoding/json"
	"os"
	"testing"
)

// FuzzDerive: any JSON a document could hold derives without panicking,
// into schemas and definitions that are valid JSON.
func FuzzDerive(f *testing.F) {
	for _, doc := range testDocuments {
		b, err := os.ReadFile("testdata/" + doc)
		if err != nil {
			f.Fatal(err)
		}
		if text, err := newDocument(b, nil, "").jsonText(context.Background()); err == nil {
			f.Add(text)
		}
	}
	f.Add([]byte(`{"swagger":"2.0","paths":{"/{a}":{"parameters":[{"$ref":"#/paths/~1{a}/parameters/0"}],"get":{}}}}`))
	f.Add([]byte(`{"openapi":"3.1.0","paths":{"/":{"get":{"responses":{"200":{"$ref":"#/paths/~1/get/responses/200"}}}}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		root, ok := parseJSON(b)
		if !ok {
			return
		}
		d, err := derive(context.Background(), &root, len(b))
		if err != nil {
			return
		}
		for _, m := range d.Methods {
			for _, s := range []json.RawMessage{m.Tool.InputSchema, m.Tool.OutputSchema} {
				if len(s) > 0 && !json.Valid(s) {
					t.Fatalf("%s: invalid schema %s", m.Op.SourceName, s)
				}
			}
		}
		c := &Connector{}
		c.assemble(d, &filter{})
		if len(c.defs) > 0 && !json.Valid(c.defs) {
			t.Fatalf("invalid definitions %s", c.defs)
		}
	})
}
