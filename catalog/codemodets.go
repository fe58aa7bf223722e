package runtime

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// The TypeScript of the sandbox's own codemode global is made from the Go
// types of what its services answer (services), so that what a program is
// told it gets is what it gets: a field added to searchResult appears in
// the declaration, with its JSDoc from the field's doc tag.

// codemodeTypes are the Go types the declaration names (type X = {…}),
// in the order it declares them; any other struct is written inline.
var codemodeTypes = []struct {
	t    reflect.Type
	name string
	doc  string
}{
	{reflect.TypeFor[searchResult](), "CodemodeSearchResult", "A search hit: a connector, one of its methods, or a saved snippet."},
	{reflect.TypeFor[description](), "CodemodeDescription", "The TypeScript and description of one path."},
}

// codemodeTypeNames are the type names codemodeDeclaration declares.
var codemodeTypeNames = func() []string {
	names := make([]string, len(codemodeTypes))
	for i, ct := range codemodeTypes {
		names[i] = ct.name
	}
	return names
}()

// codemodeDeclaration is the TypeScript of the sandbox's own codemode
// global: the types above, the services, and the functions the sandbox
// itself installs (step, run).
var codemodeDeclaration = func() string {
	var b strings.Builder
	for _, ct := range codemodeTypes {
		fmt.Fprintf(&b, "/** %s */\ntype %s = %s;\n", ct.doc, ct.name, tsStruct(ct.t, "  ", "\n"))
	}
	b.WriteString("declare const codemode: {\n")
	for _, sv := range services {
		if sv.doc == "" {
			continue
		}
		params := make([]string, len(sv.params))
		for i, p := range sv.params {
			params[i] = p.Name + "?: unknown"
			if p.String {
				params[i] = p.Name + ": string"
			}
		}
		fmt.Fprintf(&b, "  /** %s */\n  %s(%s): Promise<%s>;\n", sv.doc, sv.name, strings.Join(params, ", "), tsType(sv.result))
	}
	b.WriteString(`  /** Run non-deterministic code once; on replay its recorded value is returned without running fn. fn must not call connectors. */
  step<T>(name: string, fn: () => T | Promise<T>): Promise<T>;
  /** Run a saved snippet with an input; its calls continue this run's log. */
  run(name: string, input?: unknown): Promise<unknown>;
};
`)
	return b.String()
}()

// tsType is the TypeScript of the JSON encoding/json makes of a value of
// type t. It covers the types the services answer with; any other panics
// when the package initialises, which every test run shows.
func tsType(t reflect.Type) string {
	for _, ct := range codemodeTypes {
		if ct.t == t {
			return ct.name
		}
	}
	switch {
	case t == reflect.TypeFor[json.RawMessage]():
		return "unknown"
	case t == reflect.TypeFor[pathKind]():
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
		return tsStruct(t, "", " ")
	}
	panic(fmt.Sprintf("runtime: no TypeScript for the Go type %s of a codemode service's answer", t))
}

// tsStruct is the TypeScript object type of struct t, one member per
// field JSON encodes (optional when omitempty), each after its doc tag as
// JSDoc; indent and sep lay it out on lines ("  ", "\n") or on one (""
// and " ", where doc tags are left out).
func tsStruct(t reflect.Type, indent, sep string) string {
	var b strings.Builder
	b.WriteString("{" + sep)
	var members []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		var m strings.Builder
		if doc := f.Tag.Get("doc"); doc != "" && sep == "\n" {
			m.WriteString(indent + "/** " + doc + " */\n")
		}
		m.WriteString(indent + name)
		if strings.Contains(","+opts+",", ",omitempty,") {
			m.WriteString("?")
		}
		m.WriteString(": " + tsType(f.Type) + ";")
		members = append(members, m.String())
	}
	if sep == "\n" {
		b.WriteString(strings.Join(members, "\n") + "\n}")
	} else {
		b.WriteString(strings.TrimSuffix(strings.Join(members, " "), ";") + " }")
	}
	return b.String()
}
