package notes

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.uber.org/goleak"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/store/sqlite"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// openNotes returns the connector on a fresh store file.
func openNotes(t *testing.T) (*Notes, *sqlite.Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "codemode.db")
	return openNotesAt(t, path)
}

func openNotesAt(t *testing.T, path string) (*Notes, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return New(Name, st), st
}

// call runs a tool that must succeed and decodes its value into out.
func call(t *testing.T, n *Notes, tool, args string, out any) {
	t.Helper()
	res, err := n.Call(context.Background(), tool, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s(%s): %v", tool, args, err)
	}
	if res.IsError {
		t.Fatalf("%s(%s): tool error: %s", tool, args, res.Message)
	}
	if err := json.Unmarshal(res.Value, out); err != nil {
		t.Fatalf("%s(%s): decode %s: %v", tool, args, res.Value, err)
	}
}

func listIDs(t *testing.T, n *Notes, args string) []string {
	t.Helper()
	var got listResult
	call(t, n, ToolList, args, &got)
	var ids []string
	for _, nt := range got.Notes {
		ids = append(ids, nt.ID)
	}
	return ids
}

func TestTools(t *testing.T) {
	n, _ := openNotes(t)
	got, err := n.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		Name, SourceName         string
		RequiresApproval         bool
		ReadOnly, Destructive    bool
		Revertible               bool
		HasInput, HasOutput      bool
		IsIdentifier, HasSummary bool
	}
	var sums []summary
	for _, tl := range got {
		sums = append(sums, summary{
			Name: tl.Name, SourceName: tl.SourceName, RequiresApproval: tl.RequiresApproval,
			ReadOnly: *tl.Annotations.ReadOnly, Destructive: *tl.Annotations.Destructive,
			Revertible: n.Revertible(tl.SourceName),
			HasInput:   len(tl.InputSchema) > 0, HasOutput: len(tl.OutputSchema) > 0,
			IsIdentifier: connectors.IsIdentifier(tl.Name), HasSummary: tl.Title != "" && tl.Description != "",
		})
		for _, s := range []json.RawMessage{tl.InputSchema, tl.OutputSchema} {
			compileSchema(t, s)
		}
	}
	want := []summary{
		{ToolList, ToolList, false, true, false, false, true, true, true, true},
		{ToolCreate, ToolCreate, true, false, false, true, true, true, true, true},
		{ToolDelete, ToolDelete, true, false, true, false, true, true, true, true},
	}
	if diff := cmp.Diff(want, sums); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if n.Name() != "notes" || connectors.ValidateConnectorName(n.Name()) != nil {
		t.Errorf("Name() = %q, want a valid \"notes\"", n.Name())
	}
	// The list is the caller's copy.
	got[0].Name = "changed"
	again, _ := n.Tools(context.Background())
	if again[0].Name != ToolList {
		t.Errorf("Tools shares its slice with callers")
	}
}

// compileSchema compiles a JSON Schema (draft 2020-12).
func compileSchema(t *testing.T, schema json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("mem:///schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///schema.json")
	if err != nil {
		t.Fatalf("compile %s: %v", schema, err)
	}
	return s
}

func validate(t *testing.T, schema, value json.RawMessage) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		t.Fatalf("value %s: %v", value, err)
	}
	return compileSchema(t, schema).Validate(v)
}

func toolByName(t *testing.T, name string) connectors.Tool {
	t.Helper()
	for _, tl := range tools {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return connectors.Tool{}
}

var noteID = regexp.MustCompile(`^note_[0-9a-f]{16}$`)

func TestCreateListDelete(t *testing.T) {
	n, _ := openNotes(t)
	before := time.Now().Add(-time.Second)
	var a, b, c note
	call(t, n, ToolCreate, `{"text":"buy milk","tags":["shop","home","shop"]}`, &a)
	call(t, n, ToolCreate, `{"text":"call mum"}`, &b)
	call(t, n, ToolCreate, `{"text":"hammer","tags":["shop"]}`, &c)
	for _, nt := range []note{a, b, c} {
		if !noteID.MatchString(nt.ID) {
			t.Errorf("id %q does not look like note_<16 hex>", nt.ID)
		}
		ts, err := time.Parse(time.RFC3339Nano, nt.CreatedAt)
		if err != nil || ts.Before(before) || ts.After(time.Now().Add(time.Second)) {
			t.Errorf("createdAt %q: want about now in RFC 3339 (%v)", nt.CreatedAt, err)
		}
	}
	wantA := note{ID: a.ID, Text: "buy milk", Tags: []string{"shop", "home"}, CreatedAt: a.CreatedAt}
	if diff := cmp.Diff(wantA, a); diff != "" {
		t.Errorf("created note (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{}, b.Tags); diff != "" {
		t.Errorf("tags of a note without tags (-want +got):\n%s", diff)
	}

	var all listResult
	call(t, n, ToolList, `{}`, &all)
	if diff := cmp.Diff(listResult{Notes: []note{c, b, wantA}}, all); diff != "" {
		t.Errorf("listNotes, newest first (-want +got):\n%s", diff)
	}

	lists := []struct {
		args string
		want []string
	}{
		{``, []string{c.ID, b.ID, a.ID}},
		{`null`, []string{c.ID, b.ID, a.ID}},
		{`{"tag":"shop"}`, []string{c.ID, a.ID}},
		{`{"tag":"home"}`, []string{a.ID}},
		{`{"tag":"sho"}`, nil},
		{`{"limit":2}`, []string{c.ID, b.ID}},
		{`{"tag":"shop","limit":1}`, []string{c.ID}},
		{`{"limit":1.0}`, []string{c.ID}},
	}
	for _, l := range lists {
		if diff := cmp.Diff(l.want, listIDs(t, n, l.args)); diff != "" {
			t.Errorf("listNotes(%s) (-want +got):\n%s", l.args, diff)
		}
	}

	var del deleteResult
	call(t, n, ToolDelete, fmt.Sprintf(`{"id":%q}`, a.ID), &del)
	if !del.Deleted {
		t.Errorf("deleteNote of an existing note: deleted = false")
	}
	call(t, n, ToolDelete, fmt.Sprintf(`{"id":%q}`, a.ID), &del)
	if del.Deleted {
		t.Errorf("deleteNote of a deleted note: deleted = true")
	}
	if diff := cmp.Diff([]string{c.ID, b.ID}, listIDs(t, n, `{}`)); diff != "" {
		t.Errorf("after delete (-want +got):\n%s", diff)
	}
}

// A note whose stored value is not a note (not JSON, or JSON of another
// shape: a hand edit, another program) is left out of listNotes, which
// lists the others, and logged with its id; it counts in no limit.
func TestListLeavesOutAnUnreadableNote(t *testing.T) {
	path := filepath.Join(t.TempDir(), "codemode.db")
	n, _ := openNotesAt(t, path)
	var logs bytes.Buffer
	n.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	var a, b, c note
	call(t, n, ToolCreate, `{"text":"a"}`, &a)
	call(t, n, ToolCreate, `{"text":"b"}`, &b)
	call(t, n, ToolCreate, `{"text":"c"}`, &c)
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for id, v := range map[string]string{b.ID: `{"text":`, c.ID: `{"text":5}`} {
		if _, err := raw.Exec(`UPDATE records SET value = $1 WHERE id = $2`, v, id); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{a.ID}, listIDs(t, n, `{"limit":1}`)); diff != "" {
		t.Errorf("listNotes over two unreadable notes (-want +got):\n%s", diff)
	}
	for _, id := range []string{b.ID, c.ID} {
		if !strings.Contains(logs.String(), id) {
			t.Errorf("the log does not name the unreadable note %s:\n%s", id, logs.String())
		}
	}
}

func TestEmptyListIsArray(t *testing.T) {
	n, _ := openNotes(t)
	res, err := n.Call(context.Background(), ToolList, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Value); got != `{"notes":[]}` {
		t.Errorf("listNotes on no notes = %s, want {\"notes\":[]}", got)
	}
}

// TestResultsMatchOutputSchemas validates what every tool returns against
// the output schema it declares.
func TestResultsMatchOutputSchemas(t *testing.T) {
	n, _ := openNotes(t)
	ctx := context.Background()
	calls := []struct{ tool, args string }{
		{ToolList, `{}`},
		{ToolCreate, `{"text":"a","tags":["x"]}`},
		{ToolCreate, `{"text":"b"}`},
		{ToolList, `{}`},
		{ToolList, `{"tag":"x"}`},
		{ToolDelete, `{"id":"note_0000000000000000"}`},
	}
	for _, c := range calls {
		res, err := n.Call(ctx, c.tool, json.RawMessage(c.args))
		if err != nil || res.IsError {
			t.Fatalf("%s(%s): %v %s", c.tool, c.args, err, res.Message)
		}
		if err := validate(t, toolByName(t, c.tool).OutputSchema, res.Value); err != nil {
			t.Errorf("%s(%s) = %s does not match its output schema: %v", c.tool, c.args, res.Value, err)
		}
	}
}

// TestBadArguments checks that the connector refuses what its input schema
// refuses, whoever calls it, with every violation and its JSON pointer, and
// accepts what it accepts.
func TestBadArguments(t *testing.T) {
	n, _ := openNotes(t)
	tests := []struct {
		tool string
		args string
		want string // substring of the message; "" means valid
	}{
		{ToolCreate, `{}`, `at (root): missing property 'text'`},
		{ToolCreate, `{"text":""}`, `at /text: minLength: got 0, want 1`},
		{ToolCreate, `{"text":5}`, `at /text: got number, want string`},
		{ToolCreate, `{"text":null}`, `at /text: got null, want string`},
		{ToolCreate, `{"text":"x","tags":"work"}`, `at /tags: got string, want array`},
		{ToolCreate, `{"text":"x","tags":null}`, `at /tags: got null, want array`},
		{ToolCreate, `{"text":"x","tags":["a",2]}`, `at /tags/1: got number, want string`},
		{ToolCreate, `{"text":"x","tags":["a",""]}`, `at /tags/1: minLength: got 0, want 1`},
		{ToolCreate, `{"text":"x","title":"y"}`, `at (root): additional properties 'title' not allowed`},
		{ToolCreate, `["x"]`, `at (root): got array, want object`},
		{ToolCreate, `{"text":"x","tags":[]}`, ``},
		{ToolList, `{"limit":0}`, `at /limit: minimum: got 0, want 1`},
		{ToolList, `{"limit":1001}`, `at /limit: maximum: got 1,001, want 1,000`},
		{ToolList, `{"limit":2.5}`, `at /limit: got number, want integer`},
		{ToolList, `{"limit":"3"}`, `at /limit: got string, want integer`},
		{ToolList, `{"tag":["a"]}`, `at /tag: got array, want string`},
		{ToolList, `{"tags":"a"}`, `at (root): additional properties 'tags' not allowed`},
		{ToolList, `{"tag":""}`, ``},
		{ToolDelete, `{}`, `at (root): missing property 'id'`},
		{ToolDelete, `{"id":""}`, `at /id: minLength: got 0, want 1`},
		{ToolDelete, `{"id":7}`, `at /id: got number, want string`},
		{ToolDelete, `{"id":"note_x","force":true}`, `at (root): additional properties 'force' not allowed`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.args, func(t *testing.T) {
			res, err := n.Call(context.Background(), tt.tool, json.RawMessage(tt.args))
			if err != nil {
				t.Fatalf("Call error = %v, want a tool error in the result", err)
			}
			if tt.want == "" {
				if res.IsError {
					t.Errorf("valid arguments refused: %q", res.Message)
				}
				return
			}
			if !res.IsError {
				t.Fatalf("IsError = false (value %s), want a message containing %q", res.Value, tt.want)
			}
			if !bytes.Contains([]byte(res.Message), []byte(tt.want)) {
				t.Errorf("Message = %q, want it to contain %q", res.Message, tt.want)
			}
			if res.Value != nil {
				t.Errorf("Value = %s, want none with an error", res.Value)
			}
		})
	}
	// Nothing was created by the refused or valid-but-empty calls but the one
	// valid createNote.
	if got := listIDs(t, n, `{}`); len(got) != 1 {
		t.Errorf("notes after argument tests = %d, want 1", len(got))
	}
}

func TestUnknownTool(t *testing.T) {
	n, _ := openNotes(t)
	_, err := n.Call(context.Background(), "editNote", json.RawMessage(`{}`))
	if !errors.Is(err, connectors.ErrUnknownTool) {
		t.Errorf("Call(editNote) error = %v, want ErrUnknownTool", err)
	}
}

func TestRevertCreateNote(t *testing.T) {
	n, _ := openNotes(t)
	ctx := context.Background()
	var kept, undone note
	call(t, n, ToolCreate, `{"text":"keep"}`, &kept)
	args := json.RawMessage(`{"text":"undo me"}`)
	res, err := n.Call(ctx, ToolCreate, args)
	if err != nil || res.IsError {
		t.Fatal(err, res.Message)
	}
	if err := json.Unmarshal(res.Value, &undone); err != nil {
		t.Fatal(err)
	}
	if err := n.Revert(ctx, ToolCreate, args, res.Value); err != nil {
		t.Fatalf("Revert: %v", err)
	}
	if diff := cmp.Diff([]string{kept.ID}, listIDs(t, n, `{}`)); diff != "" {
		t.Errorf("after revert (-want +got):\n%s", diff)
	}
	// Reverting again (the note is already gone) is not an error.
	if err := n.Revert(ctx, ToolCreate, args, res.Value); err != nil {
		t.Errorf("second Revert: %v", err)
	}
	if diff := cmp.Diff([]string{kept.ID}, listIDs(t, n, `{}`)); diff != "" {
		t.Errorf("after second revert (-want +got):\n%s", diff)
	}
}

func TestRevertErrors(t *testing.T) {
	n, _ := openNotes(t)
	var kept note
	call(t, n, ToolCreate, `{"text":"keep"}`, &kept)
	tests := []struct {
		name, tool, result string
	}{
		{"deleteNote is not revertible", ToolDelete, `{"deleted":true}`},
		{"listNotes is not revertible", ToolList, `{"notes":[]}`},
		{"unknown tool", "editNote", `{"id":"x"}`},
		{"result without id", ToolCreate, `{"text":"keep"}`},
		{"result not an object", ToolCreate, `"note_1"`},
		{"no result", ToolCreate, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := n.Revert(context.Background(), tt.tool, json.RawMessage(`{}`), json.RawMessage(tt.result)); err == nil {
				t.Error("Revert succeeded")
			}
		})
	}
	if diff := cmp.Diff([]string{kept.ID}, listIDs(t, n, `{}`)); diff != "" {
		t.Errorf("notes after failed reverts (-want +got):\n%s", diff)
	}
}

func TestConcurrentCreates(t *testing.T) {
	n, _ := openNotes(t)
	const (
		workers = 8
		each    = 25
	)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		ids  []string
		errs []error
	)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				res, err := n.Call(context.Background(), ToolCreate, json.RawMessage(fmt.Sprintf(`{"text":"w%d-%d","tags":["w%d"]}`, w, i, w)))
				var nt note
				if err == nil && res.IsError {
					err = errors.New(res.Message)
				}
				if err == nil {
					err = json.Unmarshal(res.Value, &nt)
				}
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					ids = append(ids, nt.ID)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d creates failed; first: %v", len(errs), errs[0])
	}
	got := listIDs(t, n, `{"limit":1000}`)
	if diff := cmp.Diff(ids, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("listed ids differ from created ones (-created +listed):\n%s", diff)
	}
	if len(got) != workers*each {
		t.Errorf("notes = %d, want %d", len(got), workers*each)
	}
	if w3 := listIDs(t, n, `{"tag":"w3","limit":1000}`); len(w3) != each {
		t.Errorf("notes tagged w3 = %d, want %d", len(w3), each)
	}
}

// TestNotesPersist: the table survives reopening the file, and New on an
// existing table keeps its notes.
func TestNotesPersist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "codemode.db")
	var created note
	func() {
		st, err := sqlite.Open(context.Background(), path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		call(t, New(Name, st), ToolCreate, `{"text":"remember","tags":["a"]}`, &created)
	}()
	n, _ := openNotesAt(t, path)
	var got listResult
	call(t, n, ToolList, `{"tag":"a"}`, &got)
	if diff := cmp.Diff(listResult{Notes: []note{created}}, got); diff != "" {
		t.Errorf("after reopen (-want +got):\n%s", diff)
	}
	if err := n.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := n.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
