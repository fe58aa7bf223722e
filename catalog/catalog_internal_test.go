package catalog

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/schemacheck"
	"github.com/codemode-mcp/codemode-mcp/internal/search"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// testConnector is a connector named c with shared schemas defs ("" for
// none), as Build makes one, without listing.
func testConnector(defs string) *Connector {
	s := &Connector{Name: "c", byName: map[string]*Method{}, log: slog.New(slog.DiscardHandler)}
	if defs != "" {
		s.defs = json.RawMessage(defs)
	}
	s.shared = sync.OnceValue(s.decodeShared)
	return s
}

// testMethod is a method m of s with that input schema.
func testMethod(s *Connector, input string) *Method {
	return s.newMethod(connectors.Tool{Name: "m", InputSchema: json.RawMessage(input)})
}

func TestNearest(t *testing.T) {
	names := []string{"write_file", "read_file", "read_files", "list_dir", "move_file"}
	got := Nearest("read_fil", names, 3)
	if diff := cmp.Diff([]string{"read_file", "read_files", "move_file"}, got); diff != "" {
		t.Errorf("nearest (-want +got):\n%s", diff)
	}
}

// TestCompileSchemaShared: a method's input schema referring to a connector's shared
// definitions validates against them (transitively, recursion included),
// and the shared document is not changed.
func TestCompileSchemaShared(t *testing.T) {
	sharedRaw := `{"components":{"schemas":{
		"pet":{"type":"object","properties":{"name":{"type":"string"},"tag":{"$ref":"#/components/schemas/tag"},"parent":{"$ref":"#/components/schemas/pet"}},"required":["name"]},
		"tag":{"type":"string","enum":["a","b"]},
		"unused":{"type":"number"}}}}`
	conn := testConnector(sharedRaw)
	shared := conn.shared()
	before, _ := json.Marshal(shared)
	sch := testMethod(conn, `{"type":"object","properties":{"body":{"$ref":"#/components/schemas/pet"}},"required":["body"]}`).InputSchema()
	if sch == nil {
		t.Fatal("the schema did not compile")
	}
	check := func(args string, wants ...string) {
		t.Helper()
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
		if err != nil {
			t.Fatal(err)
		}
		err = schemacheck.Validate(sch, "arguments", v)
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
		t.Error("compiling changed the shared definitions")
	}
	// A reference written with percent escapes resolves there too, as
	// typegen declares it.
	sch = testMethod(conn, `{"type":"object","properties":{"t":{"$ref":"#/components/%73chemas/tag"}},"required":["t"]}`).InputSchema()
	if sch == nil {
		t.Fatal("the schema with a percent-encoded reference did not compile")
	}
	check(`{"t":"a"}`)
	check(`{"t":"c"}`, "/t")
	// A reference that resolves nowhere still fails to compile.
	if testMethod(conn, `{"$ref":"#/components/schemas/nope"}`).InputSchema() != nil {
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
	params, got := schemaText(json.RawMessage(input))
	if params != "body owner" {
		t.Errorf("schemaText's top-level names = %q, want \"body owner\"", params)
	}
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
	if params, got := schemaText(json.RawMessage(`not json`)); params != "" || got != "" {
		t.Errorf("schemaText(not json) = %q", got)
	}
	deep := `{"type":"object","properties":{"a":{"properties":{"b":{"properties":{"c":{"properties":{"d":{"properties":{"e":{"properties":{"toodeep":{}}}}}}}}}}}}}`
	if _, got := schemaText(json.RawMessage(deep)); strings.Contains(got, "toodeep") || !strings.Contains(got, "b") {
		t.Errorf("schemaText past the depth limit: %q", got)
	}
	yes, no := true, false
	for _, tc := range []struct {
		ro   *bool
		want search.Effect
	}{{&yes, search.Reads}, {&no, search.Writes}, {nil, search.Unknown}} {
		tl := testMethod(testConnector(""), "{}")
		tl.Def = (connectors.Tool{Name: "m", InputSchema: json.RawMessage(`{}`), Annotations: connectors.Annotations{ReadOnly: tc.ro}})
		if got := tl.searchDoc().Effect; got != tc.want {
			t.Errorf("readOnlyHint %v: effect %v, want %v", tc.ro, got, tc.want)
		}
	}
	// A deprecated method gives way to others matching as well.
	for _, dep := range []bool{false, true} {
		tl := testMethod(testConnector(""), "{}")
		tl.Def = (connectors.Tool{Name: "m", InputSchema: json.RawMessage(`{}`), Deprecated: dep})
		if w := tl.searchDoc().Weight; dep && (w <= 0 || w >= 1) || !dep && w != 0 {
			t.Errorf("deprecated %v: weight %v", dep, w)
		}
	}
}

// TestForwardedMethodsAreBounded: the methods made for names a connector
// did not list (forward_unknown) are kept for reuse, but a program can
// call any number of distinct names, so only maxForwardedKept are kept;
// past that a name still gets its method, made afresh.
func TestForwardedMethodsAreBounded(t *testing.T) {
	s := testConnector("")
	s.Source.ForwardUnknown = true
	for i := range maxForwardedKept + 500 {
		name := fmt.Sprintf("m%d", i)
		if m := s.forwarded(name); m.Def.Name != name || m.Def.SourceName != name {
			t.Fatalf("forwarded(%q) = %q (source %q)", name, m.Def.Name, m.Def.SourceName)
		}
	}
	kept := 0
	s.fwd.Range(func(any, any) bool { kept++; return true })
	if kept != maxForwardedKept {
		t.Errorf("%d forwarded methods kept, want %d", kept, maxForwardedKept)
	}
	if a, b := s.forwarded("m1"), s.forwarded("m1"); a != b {
		t.Error("a kept name got a new method")
	}
}

// TestCheckEnum checks that the check before running compares a literal
// with an enum's values by value and type (1 and 1.0, 0 and -0 are equal;
// "1" and 1 are not; arrays and objects by content), and with each value
// once per check, not once per item of an array literal: doubling the
// enum of an array of 2,000 items hardly changes the allocations.
func TestCheckEnum(t *testing.T) {
	item := func(v string) *sandbox.Literal {
		return &sandbox.Literal{Kind: "?", Value: json.RawMessage(v), Line: 1, Col: 1}
	}
	call := func(items ...*sandbox.Literal) sandbox.StaticCall {
		return sandbox.StaticCall{Connector: "c", Method: "m", Args: &sandbox.Literal{Kind: "object", Open: true,
			Props: []sandbox.LiteralProp{{Key: "a", Value: &sandbox.Literal{Kind: "array", Items: items}}}}}
	}
	// Scanned (short), and made a set (long).
	for _, enum := range []string{`1.0,0,"x",null,true,[1,{"k":2}],{"k":[1]}`, `1.0,0,"x",null,true,[1,{"k":2}],{"k":[1]},"f1","f2","f3","f4","f5"`} {
		m := testMethod(testConnector(""), `{"type":"object","properties":{"a":{"type":"array","items":{"enum":[`+enum+`]}}}}`)
		var got []string
		for _, v := range []string{"1", "1.00", "-0", `"x"`, "null", "true", `[1.0,{"k":2}]`, `{"k":[1]}`, `"1"`, "false", "2", `[1]`, `{"k":[2]}`} {
			if ps := m.checkArgs(call(item(v), item(v))); len(ps) > 0 {
				got = append(got, v)
			}
		}
		if want := []string{`"1"`, "false", "2", `[1]`, `{"k":[2]}`}; !cmp.Equal(got, want) {
			t.Errorf("enum [%s]: values outside it: %q, want %q", enum, got, want)
		}
	}

	allocs := func(values int) float64 {
		var e []string
		for i := range values {
			e = append(e, fmt.Sprintf(`"v%d"`, i))
		}
		m := testMethod(testConnector(""), `{"type":"object","properties":{"a":{"type":"array","items":{"enum":[`+strings.Join(e, ",")+`]}}}}`)
		items := make([]*sandbox.Literal, 2000)
		for i := range items {
			items[i] = item(e[values-1]) // the last value: found after all the others
		}
		return testing.AllocsPerRun(1, func() { m.checkArgs(call(items...)) })
	}
	if small, large := allocs(100), allocs(200); large > 1.5*small {
		t.Errorf("2,000 items against 200 values take %.0f allocations, against 100 %.0f: each item compared with each value", large, small)
	}
}

// TestForwardedNameRefusesInvisible: a name a program calls through
// forward_unknown is refused when it holds a control or format character
// (a bidi override, a zero-width space), as the MCP connector refuses such
// listed names: a person approving it would not see them.
func TestForwardedNameRefusesInvisible(t *testing.T) {
	s := testConnector("")
	s.Source.ForwardUnknown = true
	c := &Catalog{byName: map[string]*Connector{"c": s}, connectors: []*Connector{s}}
	for _, name := range []string{"delete\u202eelif", "del\u200bete", "del\u2066ete", "\ufeffdelete", "del\nete", "del\u0085ete"} {
		if m, err := c.Resolve("c", name); err == nil {
			t.Errorf("Resolve(%q) forwarded %q", name, m.Def.Name)
		}
	}
	if m, err := c.Resolve("c", "delete_ünicode"); err != nil || m.Def.Name != "delete_ünicode" {
		t.Errorf("a visible name is not forwarded: %v", err)
	}
}

// A method's search document reads at most maxSearchText bytes of its
// title and first line, as of the rest of its description: a
// downstream's megabyte line is not analysed whole.
func TestSearchDocSummaryBounded(t *testing.T) {
	line := strings.Repeat("word ", 1<<18)
	m := testConnector("").newMethod(connectors.Tool{Name: "m", Title: line, Description: line + "\n" + line})
	d := m.searchDoc()
	for _, f := range []search.Field{search.Summary, search.Text} {
		if n := len(d.Fields[f]); n > maxSearchText+len("…") {
			t.Errorf("field %d of %d bytes, want at most %d", f, n, maxSearchText)
		}
	}
}
