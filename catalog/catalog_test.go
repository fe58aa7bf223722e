package catalog_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/schemacheck"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// fakeConnector lists tools and definitions; it is never called.
type fakeConnector struct {
	name  string
	tools []connectors.Tool
	defs  string
}

func (f *fakeConnector) Name() string { return f.name }
func (f *fakeConnector) Tools(context.Context) ([]connectors.Tool, error) {
	return f.tools, nil
}
func (f *fakeConnector) Call(context.Context, string, json.RawMessage) (connectors.Result, error) {
	panic("the catalog does not call connectors")
}
func (f *fakeConnector) Close() error { return nil }
func (f *fakeConnector) Capabilities() connectors.Capabilities {
	return connectors.Capabilities{Definitions: json.RawMessage(f.defs)}
}

// A catalog is built and used without a store or a sandbox: the check
// before running, validation and the declarations read one method's
// schema and its connector's shared schemas, decoded once, and follow
// the same $ref to the same place; an enum's numbers compare by value.
func TestCatalogWithoutAnEngine(t *testing.T) {
	ctx := context.Background()
	conn := &fakeConnector{name: "shop", defs: `{"components":{"schemas":{"size":{"type":"integer","enum":[1.0,2,3]}}}}`,
		tools: []connectors.Tool{{Name: "order", SourceName: "order", Description: "Order a shirt.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"size":{"$ref":"#/components/schemas/size"}},"required":["size"],"additionalProperties":false}`)}}}
	cat, err := catalog.New(ctx, []catalog.Source{{Connector: conn}}, catalog.Options{Codemode: "declare const codemode: {};\n"})
	if err != nil {
		t.Fatal(err)
	}
	lit := func(size string) *sandbox.Literal {
		return &sandbox.Literal{Kind: "object", Value: json.RawMessage(`{"size":` + size + `}`), Props: []sandbox.LiteralProp{
			{Key: "size", Value: &sandbox.Literal{Kind: "number", Value: json.RawMessage(size), Line: 1, Col: 20}, Line: 1, Col: 14}}}
	}
	for size, want := range map[string]string{"1": "", "2": "", "4": `shop.order: at /size: value must be one of [1.0, 2, 3]`} {
		problems, err := cat.Check(ctx, []sandbox.StaticCall{{Connector: "shop", Method: "order", Line: 1, Col: 7, Args: lit(size)}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range problems {
			got = append(got, p.Message)
		}
		if want == "" && len(got) > 0 || want != "" && (len(got) == 0 || got[0] != want) {
			t.Errorf("size %s: problems %q, want %q", size, got, want)
		}
	}
	m, err := cat.Resolve("shop", "order")
	if err != nil {
		t.Fatal(err)
	}
	if err := schemacheck.Validate(m.InputSchema(), "arguments for shop.order", map[string]any{"size": json.Number("5")}); err == nil || !strings.Contains(err.Error(), "/size") {
		t.Errorf("size 5 validated: %v", err)
	}
	if err := schemacheck.Validate(m.InputSchema(), "arguments for shop.order", map[string]any{"size": json.Number("3")}); err != nil {
		t.Errorf("size 3 refused: %v", err)
	}
	decls, err := cat.Declarations("shop")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(decls, "size: ShopSize") || !strings.Contains(decls, "ShopSize = 1.0 | 2 | 3;") {
		t.Errorf("declarations do not show the shared enum:\n%s", decls)
	}
	all, _ := cat.Declarations("")
	if !strings.HasPrefix(all, "declare const codemode: {};\n") {
		t.Errorf("Declarations(\"\") does not begin with Options.Codemode:\n%s", all)
	}
	if _, ok := cat.Fingerprint("shop"); !ok {
		t.Error("no fingerprint for an available connector")
	}
	if got := cat.Changed(map[string]string{"shop": "old", "gone": "x"}); strings.Join(got, ",") != "gone (gone),shop (tools changed)" {
		t.Errorf("Changed = %q", got)
	}
}

// snippetStore is a SnippetStore of a list the test changes.
type snippetStore struct{ snippets []codemode.Snippet }

func (s *snippetStore) ListSnippets(context.Context) ([]codemode.Snippet, error) {
	return s.snippets, nil
}

func (s *snippetStore) SnippetStamps(context.Context) ([]codemode.Snippet, error) {
	var out []codemode.Snippet
	for _, sn := range s.snippets {
		out = append(out, codemode.Snippet{Name: sn.Name, CreatedAt: sn.CreatedAt})
	}
	return out, nil
}

func (s *snippetStore) GetSnippet(_ context.Context, name string) (*codemode.Snippet, error) {
	for _, sn := range s.snippets {
		if sn.Name == name {
			return &sn, nil
		}
	}
	return nil, codemode.ErrNotFound
}

// A snippet saved again under its name with another input schema is
// found by the new schema's parameters, not the old ones: the snippets'
// search segment is remade when any of what it indexes changes.
func TestSnippetSavedAgainIsSearchedAsSaved(t *testing.T) {
	ctx := context.Background()
	cat, err := catalog.New(ctx, nil, catalog.Options{Codemode: "declare const codemode: {};\n"})
	if err != nil {
		t.Fatal(err)
	}
	store := &snippetStore{}
	sns := catalog.NewSnippets(store)
	found := func(query string) bool {
		ans, err := cat.Search(ctx, sns, query)
		if err != nil {
			t.Fatal(err)
		}
		return len(ans.Results) > 0 && ans.Results[0].Path == "snippets.report"
	}
	saved := time.Now()
	save := func(param string) {
		saved = saved.Add(time.Second) // (when it was last saved, as the store stamps it)
		store.snippets = []codemode.Snippet{{Name: "report", Description: "Weekly report.", CreatedAt: saved,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"` + param + `":{"type":"string"}}}`)}}
	}
	save("customer")
	if !found("customer") {
		t.Fatal(`"customer" does not find the snippet`)
	}
	save("region")
	if !found("region") || found("customer") {
		t.Errorf(`saved again with "region" for "customer": found by region %v, by customer %v`, found("region"), found("customer"))
	}
}

// A name a program made up is quoted clipped in the error thrown back to
// it (and in the check before running), whatever its length.
func TestResolveClipsAnUnknownName(t *testing.T) {
	ctx := context.Background()
	conn := &fakeConnector{name: "shop", tools: []connectors.Tool{{Name: "order", SourceName: "order", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
	cat, err := catalog.New(ctx, []catalog.Source{{Connector: conn}}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	long := "orde" + strings.Repeat("r", 1<<20)
	_, err = cat.Resolve("shop", long)
	want := "shop." + long[:80] + "… is not a method of shop; nearest: order"
	if err == nil || err.Error() != want {
		t.Fatalf("Resolve = %.200v; want %q", err, want)
	}
	_, err = cat.Resolve(long, "order")
	if err == nil || err.Error() != "unknown connector "+long[:80]+"…; available: shop" {
		t.Fatalf("Resolve = %.200v; want the connector's name clipped", err)
	}
}

// A problem the validation of a constant argument finds is placed at
// the literal it is about, found by its JSON pointer as written (a key
// with "%" in it is not percent-decoded).
func TestCheckPlacesProblemsAtTheLiteral(t *testing.T) {
	ctx := context.Background()
	conn := &fakeConnector{name: "shop", tools: []connectors.Tool{{Name: "tag", SourceName: "tag",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"a%41":{"type":"string","maxLength":2},"b":{"type":"string","maxLength":2}}}`)}}}
	cat, err := catalog.New(ctx, []catalog.Source{{Connector: conn}}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"a%41", "b"} {
		lit := &sandbox.Literal{Kind: "object", Value: json.RawMessage(`{"` + key + `":"long"}`), Line: 1, Col: 10, Props: []sandbox.LiteralProp{
			{Key: key, Value: &sandbox.Literal{Kind: "string", Value: json.RawMessage(`"long"`), Line: 2, Col: 20}, Line: 2, Col: 14}}}
		problems, err := cat.Check(ctx, []sandbox.StaticCall{{Connector: "shop", Method: "tag", Line: 1, Col: 7, Args: lit}})
		if err != nil {
			t.Fatal(err)
		}
		if len(problems) != 1 || problems[0].Line != 2 || problems[0].Col != 20 {
			t.Errorf("key %q: problems %+v, want one at 2:20", key, problems)
		}
	}
}
