package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

func testSnippets(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	full := codemode.Snippet{
		Name:          "tagged",
		Description:   "notes with a tag",
		Code:          "async (input) => notes.listNotes({tag: input.tag})",
		InputSchema:   json.RawMessage(`{"type":"object","properties":{"tag":{"type":"string"}}}`),
		Connectors:    []string{"notes"},
		FromExecution: "exec_1",
		CreatedAt:     at(1),
	}
	minimal := codemode.Snippet{Name: "answer", Code: "42", CreatedAt: at(2)}
	for _, sn := range []codemode.Snippet{full, minimal} {
		must(t, s.SaveSnippet(ctx, sn))
	}
	for _, want := range []codemode.Snippet{full, minimal} {
		got, err := s.GetSnippet(ctx, want.Name)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("GetSnippet(%s) (-want +got):\n%s", want.Name, diff)
		}
	}
	list, err := s.ListSnippets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]codemode.Snippet{minimal, full}, list); diff != "" {
		t.Errorf("ListSnippets, by name (-want +got):\n%s", diff)
	}
	stamps, err := s.SnippetStamps(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]codemode.Snippet{{Name: "answer", CreatedAt: at(2)}, {Name: "tagged", CreatedAt: at(1)}}, stamps); diff != "" {
		t.Errorf("SnippetStamps, by name, names and times only (-want +got):\n%s", diff)
	}

	// Saving again replaces every field.
	replaced := codemode.Snippet{Name: "tagged", Code: "1", Description: "v2", CreatedAt: at(3)}
	must(t, s.SaveSnippet(ctx, replaced))
	got, err := s.GetSnippet(ctx, "tagged")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&replaced, got); diff != "" {
		t.Errorf("after replace (-want +got):\n%s", diff)
	}

	// A zero CreatedAt is set by the store.
	must(t, s.SaveSnippet(ctx, codemode.Snippet{Name: "now", Code: "Date.now()"}))
	if got, err := s.GetSnippet(ctx, "now"); err != nil || got.CreatedAt.IsZero() {
		t.Errorf("GetSnippet(now) = %+v, %v; want CreatedAt set", got, err)
	}

	must(t, s.DeleteSnippet(ctx, "tagged"))
	if _, err := s.GetSnippet(ctx, "tagged"); !errors.Is(err, codemode.ErrNotFound) {
		t.Errorf("GetSnippet after delete: %v, want ErrNotFound", err)
	}
	if err := s.DeleteSnippet(ctx, "tagged"); !errors.Is(err, codemode.ErrNotFound) {
		t.Errorf("DeleteSnippet twice: %v, want ErrNotFound", err)
	}
	if err := s.SaveSnippet(ctx, codemode.Snippet{Code: "1"}); err == nil {
		t.Error("SaveSnippet without a name succeeded")
	}
}

// A snippet the store cannot read (its connectors not the JSON list
// they should be, its input schema not JSON, as another release or a
// hand edit may leave) is left out of the lists rather than failing them
// (or every surface that lists them as JSON), and reading it alone says
// what is wrong.
func testUnreadableSnippet(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	for _, name := range []string{"a", "b", "c", "d"} {
		must(t, s.SaveSnippet(ctx, codemode.Snippet{Name: name, Code: "1", Connectors: []string{"notes"}, InputSchema: json.RawMessage(`{}`), CreatedAt: at(1)}))
	}
	f.Exec(t, s, `UPDATE snippets SET connectors = '["cut' WHERE name = 'b'`)
	f.Exec(t, s, `UPDATE snippets SET input_schema = '{"type":' WHERE name = 'd'`)
	list, err := s.ListSnippets(ctx)
	var names []string
	for _, sn := range list {
		names = append(names, sn.Name)
	}
	if diff := cmp.Diff([]string{"a", "c"}, names); err != nil || diff != "" {
		t.Errorf("ListSnippets: %v (-want +got):\n%s", err, diff)
	}
	for name, want := range map[string]string{"b": "decode column connectors", "d": "column input_schema holds no JSON"} {
		if _, err := s.GetSnippet(ctx, name); !errors.Is(err, codemode.ErrUnreadable) || !strings.Contains(err.Error(), want) {
			t.Errorf("GetSnippet(%s) = %v, want ErrUnreadable saying %s", name, err, want)
		}
	}
}
