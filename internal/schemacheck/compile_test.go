package schemacheck

import (
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestValidateArgs: patterns are ECMAScript (lookahead), every violation
// is listed with its pointer under a line naming the value, and references
// are never loaded.
func TestValidateArgs(t *testing.T) {
	schema := json.RawMessage(`{
		"type": "object",
		"properties": {
			"path": {"type": "string", "pattern": "^(?!/etc)"},
			"mode": {"enum": ["r", "w"]},
			"tags": {"type": "array", "items": {"type": "string"}}
		},
		"required": ["path"],
		"additionalProperties": false
	}`)
	sch, err := CompileJSON(schema)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args string
		want []string // substrings; nil = valid
	}{
		{"valid", `{"path":"a","mode":"r","tags":["x"]}`, nil},
		{"missing", `{}`, []string{"at (root):", "path"}},
		{"lookahead pattern", `{"path":"/etc/passwd"}`, []string{"at /path:"}},
		{"several", `{"path":1,"mode":"x","tags":[1],"extra":true}`, []string{"at /path:", "at /mode:", "at /tags/0:", "extra"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			err = Validate(sch, "arguments for files.open", inst)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("valid args refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("invalid args accepted")
			}
			if !strings.HasPrefix(err.Error(), "invalid arguments for files.open:") {
				t.Errorf("message %q does not name the method", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
		})
	}
	if _, err := CompileJSON(json.RawMessage(`{"$ref":"file:///etc/passwd"}`)); err == nil {
		t.Error("a schema referencing a local file compiled; references must not be loaded")
	}
}

// evil backtracks catastrophically on a run of x's that ends otherwise: a
// match of it runs out of time.
const evil = `(x+x+)+y`

// A pattern match that runs out of time is no answer: the value is
// refused with an error saying so, even where a failed match would have
// let it through (within "not").
func TestPatternOutOfTimeRefuses(t *testing.T) {
	sch := MustCompileJSON(`{"type":"string","not":{"pattern":"` + evil + `|z"}}`)
	err := Validate(sch, "arguments for t.m", strings.Repeat("x", 40)+"z")
	if err == nil || !strings.Contains(err.Error(), "took more than") {
		t.Fatalf("a value whose check ran out of time: %v; want refused for it", err)
	}
}

// The patterns of one validation share one time budget: an array of many
// strings that each make a pattern backtrack costs it once, not once per
// string, and the error says so once.
func TestPatternsShareOneBudget(t *testing.T) {
	sch := MustCompileJSON(`{"type":"array","items":{"type":"string","pattern":"^` + evil + `$"}}`)
	x := strings.Repeat("x", 40)
	err := Validate(sch, "arguments for t.m", []any{x, x, x})
	if err == nil {
		t.Fatal("accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "took more than") {
		t.Errorf("error %q; want one line saying the patterns took too long", err)
	}
}

// Validations of one compiled schema with patterns run at once from many
// goroutines (the race detector watches the budget they share) and each
// gets its own answer.
func TestPatternsConcurrentValidations(t *testing.T) {
	sch := MustCompileJSON(`{"type":"object","properties":{"id":{"type":"string","pattern":"^(?=[a-z])[a-z0-9]+$"}},"patternProperties":{"^x-":{"type":"number"}}}`)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := "ok1"
			if i%2 == 1 {
				id = "1bad"
			}
			errs[i] = Validate(sch, "arguments for t.m", map[string]any{"id": id, "x-n": json.Number("1")})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if (err != nil) != (i%2 == 1) {
			t.Errorf("validation %d: %v", i, err)
		}
	}
}

// What a schema says about itself names the schema, not a file of the
// server's working directory (its path is nobody's business): a
// reference cycle, or a relative reference that is refused.
func TestErrorsNameNoServerPath(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	sch := MustCompileJSON(`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`)
	errs := []error{Validate(sch, "arguments for t.m", map[string]any{})}
	_, err = CompileJSON([]byte(`{"$ref":"other.json"}`))
	errs = append(errs, err)
	for _, err := range errs {
		if err == nil || strings.Contains(err.Error(), wd) || strings.Contains(err.Error(), "file://") {
			t.Errorf("error %v; want one that names no file of the server", err)
		}
	}
}
