package catalog

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// The TypeScript of the sandbox's own codemode global is made from the Go
// types of what its services answer, so that what a program is told it
// gets is what it gets: a field added to SearchResult appears in the
// declaration, with its JSDoc from the field's doc tag.

// A Service is a function of the codemode global as its declaration shows
// it: its name, its JSDoc, its parameters (which the sandbox checks) and
// the Go type of its answer.
type Service struct {
	Name   string
	Doc    string
	Params []sandbox.Param
	Result reflect.Type
}

// codemodeTypes are the Go types the declaration names (type X = {…}),
// in the order it declares them; any other struct is written inline.
var codemodeTypes = []struct {
	t    reflect.Type
	name string
	doc  string
}{
	{reflect.TypeFor[SearchResult](), "CodemodeSearchResult", "A search hit: a connector, one of its methods, or a saved snippet."},
	{reflect.TypeFor[Description](), "CodemodeDescription", "The TypeScript and description of one path."},
}

// codemodeTypeNames are the type names CodemodeDeclaration declares, which
// no connector's declarations may take.
var codemodeTypeNames = func() []string {
	names := make([]string, len(codemodeTypes))
	for i, ct := range codemodeTypes {
		names[i] = ct.name
	}
	return names
}()

// CodemodeDeclaration is the TypeScript of the sandbox's own codemode
// global offering services: the types above, the services, and the
// functions the sandbox itself installs (step, run).
func CodemodeDeclaration(services []Service) string {
	var b strings.Builder
	for _, ct := range codemodeTypes {
		fmt.Fprintf(&b, "/** %s */\ntype %s = %s;\n", ct.doc, ct.name, tsStruct(ct.t, false))
	}
	b.WriteString("declare const codemode: {\n")
	for _, sv := range services {
		params := make([]string, len(sv.Params))
		for i, p := range sv.Params {
			params[i] = p.Name + "?: unknown"
			if p.String {
				params[i] = p.Name + ": string"
			}
		}
		fmt.Fprintf(&b, "  /** %s */\n  %s(%s): Promise<%s>;\n", sv.Doc, sv.Name, strings.Join(params, ", "), tsType(sv.Result))
	}
	b.WriteString(`  /** Run non-deterministic code once; on replay its recorded value is returned without running fn. fn must not call connectors. */
  step<T>(name: string, fn: () => T | Promise<T>): Promise<T>;
  /** Run a saved snippet with an input; its calls continue this run's log. */
  run(name: string, input?: unknown): Promise<unknown>;
};
`)
	return b.String()
}

// tsType is the TypeScript of the JSON encoding/json makes of a value of
// type t. It covers the types the services answer with; any other panics
// when the runtime's package initialises, which every test run shows.
func tsType(t reflect.Type) string {
	for _, ct := range codemodeTypes {
		if ct.t == t {
			return ct.name
		}
	}
	switch {
	case t == reflect.TypeFor[json.RawMessage]():
		return "unknown"
	case t == reflect.TypeFor[PathKind]():
		quoted := make([]string, len(pathKinds))
		for i, k := range pathKinds {
			quoted[i] = fmt.Sprintf("%q", k)
		}
		return strings.Join(quoted, " | ")
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "number"
	case reflect.Slice:
		return tsType(t.Elem()) + "[]"
	case reflect.Pointer:
		return tsType(t.Elem())
	case reflect.Struct:
		return tsStruct(t, true)
	}
	panic(fmt.Sprintf("catalog: no TypeScript for the Go type %s of a codemode service's answer", t))
}

// tsStruct is the TypeScript object type of struct t, one member per
// field JSON encodes (optional when omitempty): on lines of their own,
// each after its doc tag as JSDoc, or inline on one line without them.
func tsStruct(t reflect.Type, inline bool) string {
	var members []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		name = cmp.Or(name, f.Name)
		if strings.Contains(","+opts+",", ",omitempty,") {
			name += "?"
		}
		m := name + ": " + tsType(f.Type)
		if doc := f.Tag.Get("doc"); !inline && doc != "" {
			m = "/** " + doc + " */\n  " + m
		}
		members = append(members, m)
	}
	if inline {
		return "{ " + strings.Join(members, "; ") + " }"
	}
	return "{\n  " + strings.Join(members, ";\n  ") + ";\n}"
}
