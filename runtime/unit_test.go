package runtime

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/search"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestCanonicalJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, `{}`},
		{`{}`, `{}`},
		{` { } `, `{}`},
		{`{"b":1,"a":{"d":[1,2],"c":null}}`, `{"a":{"c":null,"d":[1,2]},"b":1}`},
		{" {\n \"a\" : 1.50 } ", `{"a":1.50}`},
		{`{"big":12345678901234567890}`, `{"big":12345678901234567890}`},
		{`"x"`, `"x"`},
	}
	for _, tc := range tests {
		got, err := canonicalJSON(json.RawMessage(tc.in))
		if err != nil {
			t.Errorf("canonicalJSON(%q): %v", tc.in, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("canonicalJSON(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{`{`, `{"a":1} {"b":2}`, `nope`} {
		if _, err := canonicalJSON(json.RawMessage(bad)); err == nil {
			t.Errorf("canonicalJSON(%q) accepted invalid JSON", bad)
		}
	}
}

func TestNearest(t *testing.T) {
	names := []string{"write_file", "read_file", "read_files", "list_dir", "move_file"}
	got := nearest("read_fil", names, 3)
	if diff := cmp.Diff([]string{"read_file", "read_files", "move_file"}, got); diff != "" {
		t.Errorf("nearest (-want +got):\n%s", diff)
	}
}

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
	sch, err := compileSchema(schema, nil)
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
			inst, err := decodeJSON([]byte(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			err = validateValue(sch, "arguments for files.open", inst)
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
	if _, err := compileSchema(json.RawMessage(`{"$ref":"file:///etc/passwd"}`), nil); err == nil {
		t.Error("a schema referencing a local file compiled; references must not be loaded")
	}
}

func TestUserErrors(t *testing.T) {
	err := wrongState("execution %s is %s; only a paused execution can be approved", "exec_1", codemode.StatusCompleted)
	if !errors.Is(err, codemode.ErrWrongState) || err.Error() != "execution exec_1 is completed; only a paused execution can be approved" {
		t.Errorf("wrongState = %q (is ErrWrongState: %v)", err, errors.Is(err, codemode.ErrWrongState))
	}
	if err := unknownExecution("x"); !errors.Is(err, codemode.ErrUnknownExecution) || err.Error() != `unknown execution "x"` {
		t.Errorf("unknownExecution = %q (is ErrUnknownExecution: %v); the engine names no surface's tool or command", err, errors.Is(err, codemode.ErrUnknownExecution))
	}
	if err := unknownSnippet("s"); !errors.Is(err, codemode.ErrUnknownSnippet) || err.Error() != `unknown snippet "s"` {
		t.Errorf("unknownSnippet = %q (is ErrUnknownSnippet: %v); the engine names no surface's tool or command", err, errors.Is(err, codemode.ErrUnknownSnippet))
	}
}

// TestCompileSchemaShared: a schema referring to a connector's shared
// definitions validates against them (transitively, recursion included),
// and the shared document is not changed.
func TestCompileSchemaShared(t *testing.T) {
	sharedRaw := `{"components":{"schemas":{
		"pet":{"type":"object","properties":{"name":{"type":"string"},"tag":{"$ref":"#/components/schemas/tag"},"parent":{"$ref":"#/components/schemas/pet"}},"required":["name"]},
		"tag":{"type":"string","enum":["a","b"]},
		"unused":{"type":"number"}}}}`
	shared, err := jsonschema.UnmarshalJSON(strings.NewReader(sharedRaw))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := json.Marshal(shared)
	sch, err := compileSchema(json.RawMessage(`{"type":"object","properties":{"body":{"$ref":"#/components/schemas/pet"}},"required":["body"]}`), shared)
	if err != nil {
		t.Fatal(err)
	}
	check := func(args string, wants ...string) {
		t.Helper()
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
		if err != nil {
			t.Fatal(err)
		}
		err = validateValue(sch, "arguments", v)
		if len(wants) == 0 {
			if err != nil {
				t.Errorf("%s: %v", args, err)
			}
			return
		}
		if err == nil {
			t.Fatalf("%s: no error, want %q", args, wants)
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", args, err, w)
			}
		}
	}
	check(`{"body":{"name":"rex","tag":"a","parent":{"name":"old"}}}`)
	check(`{"body":{"name":"rex","tag":"c"}}`, "/body/tag")
	check(`{"body":{"parent":{"name":1}}}`, "/body/parent/name", "at /body:")
	after, _ := json.Marshal(shared)
	if string(before) != string(after) {
		t.Error("compileSchema changed the shared definitions")
	}
	// A reference that resolves nowhere still fails to compile.
	if _, err := compileSchema(json.RawMessage(`{"$ref":"#/components/schemas/nope"}`), shared); err == nil {
		t.Error("a dangling reference compiled")
	}
}

// A method's search document carries what its input says below the top
// level (nested names, enum values, descriptions) in the Schema field,
// and its effect as its annotations declare it.
func TestSearchDocSchemaAndEffect(t *testing.T) {
	input := `{"type":"object","properties":{
		"owner":{"type":"string","description":"The account owner."},
		"body":{"type":"object","properties":{
			"state_reason":{"type":"string","enum":["completed","reopened",3],"description":"Why the state changed."},
			"labels":{"type":"array","items":{"oneOf":[{"type":"string"},{"type":"object","properties":{"color":{"type":"string"}}}]}}}}}}`
	got := schemaText(json.RawMessage(input))
	for _, want := range []string{"state_reason", "reopened", "completed", "Why the state changed.", "labels", "color", "The account owner."} {
		if !strings.Contains(got, want) {
			t.Errorf("schemaText lacks %q: %q", want, got)
		}
	}
	for _, not := range []string{"owner ", "3"} {
		if strings.Contains(got, not) {
			t.Errorf("schemaText has %q: %q", not, got)
		}
	}
	if got := schemaText(json.RawMessage(`not json`)); got != "" {
		t.Errorf("schemaText(not json) = %q", got)
	}
	deep := `{"type":"object","properties":{"a":{"properties":{"b":{"properties":{"c":{"properties":{"d":{"properties":{"e":{"properties":{"toodeep":{}}}}}}}}}}}}}`
	if got := schemaText(json.RawMessage(deep)); strings.Contains(got, "toodeep") || !strings.Contains(got, "b") {
		t.Errorf("schemaText past the depth limit: %q", got)
	}
	yes, no := true, false
	for _, tc := range []struct {
		ro   *bool
		want search.Effect
	}{{&yes, search.Reads}, {&no, search.Writes}, {nil, search.Unknown}} {
		tl := &tool{src: &source{name: "c"}, def: connectors.Tool{Name: "m", InputSchema: json.RawMessage(`{}`), Annotations: connectors.Annotations{ReadOnly: tc.ro}}}
		if got := tl.searchDoc().Effect; got != tc.want {
			t.Errorf("readOnlyHint %v: effect %v, want %v", tc.ro, got, tc.want)
		}
	}
	// A deprecated method gives way to others matching as well.
	for _, dep := range []bool{false, true} {
		tl := &tool{src: &source{name: "c"}, def: connectors.Tool{Name: "m", InputSchema: json.RawMessage(`{}`), Deprecated: dep}}
		if w := tl.searchDoc().Weight; dep && (w <= 0 || w >= 1) || !dep && w != 0 {
			t.Errorf("deprecated %v: weight %v", dep, w)
		}
	}
}
