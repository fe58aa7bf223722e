package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// bob is the other person of the suite's runs and decisions (alice is
// the first).
var bob = codemode.Person{Subject: "sub-bob", Name: "Bob"}

// at returns a fixed instant plus n seconds.
func at(n int) time.Time {
	return time.Date(2026, 3, 1, 12, 0, n, 123456789, time.UTC)
}

// bigJSON is a JSON string of about n bytes.
func bigJSON(n int) json.RawMessage {
	return json.RawMessage(`"` + strings.Repeat("x", n) + `"`)
}

// rawAsString compares raw JSON as text: readable diffs, and fast on the
// 1 MB values (element-wise byte comparison takes seconds under -race).
var rawAsString = cmp.Transformer("string", func(r json.RawMessage) string { return string(r) })

// must fails t when a step that sets a check up fails.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// handles opens n handles on one new database: the first by f.New, the
// others by f.Another, as other processes sharing it would.
func handles(t *testing.T, f Factory, n int) []codemode.Store {
	stores := []codemode.Store{f.New(t)}
	for len(stores) < n {
		stores = append(stores, f.Another(t, stores[0]))
	}
	return stores
}

// create creates the executions es in s.
func create(t *testing.T, s codemode.Store, es ...*codemode.Execution) {
	t.Helper()
	for _, e := range es {
		must(t, s.CreateExecution(context.Background(), e))
	}
}

// insert inserts the entries es into s, one InsertEntry each.
func insert(t *testing.T, s codemode.Store, es ...codemode.Entry) {
	t.Helper()
	for _, e := range es {
		must(t, s.InsertEntry(context.Background(), e))
	}
}

// execution returns execution id of s.
func execution(t *testing.T, s codemode.Store, id string) *codemode.Execution {
	t.Helper()
	e, err := s.GetExecution(context.Background(), id)
	must(t, err)
	return e
}

// entries returns the log of id.
func entries(t *testing.T, s codemode.Store, id string) []codemode.Entry {
	t.Helper()
	log, err := s.Entries(context.Background(), id)
	must(t, err)
	return log
}

// listed returns the ids of the executions ListExecutions gives for f.
func listed(t *testing.T, s codemode.Store, f codemode.ExecutionFilter) []string {
	t.Helper()
	es, err := s.ListExecutions(context.Background(), f)
	must(t, err)
	var ids []string
	for _, e := range es {
		ids = append(ids, e.ID)
	}
	return ids
}

// wantError fails t unless err is an error, and one that is `is` when is
// is set (nil: any error will do).
func wantError(t *testing.T, what string, err, is error) {
	t.Helper()
	switch {
	case err == nil:
		t.Fatalf("%s succeeded", what)
	case is != nil && !errors.Is(err, is):
		t.Errorf("%s: error = %v, want %v", what, err, is)
	}
}

// conditional is the answer of a conditional write to race: a write that
// lost to another (ErrConflict) is not a failure.
func conditional(err error) (won bool, _ error) {
	if errors.Is(err, codemode.ErrConflict) {
		return false, nil
	}
	return err == nil, err
}

// race runs try(0), …, try(n-1) at once, each a conditional write of the
// same thing, and returns the one that won: exactly one must win, and
// none may fail otherwise than by losing.
func race(t *testing.T, what string, n int, try func(i int) (won bool, err error)) int {
	t.Helper()
	won, errs := make([]bool, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { won[i], errs[i] = try(i) })
	}
	wg.Wait()
	winner := -1
	for i := range n {
		switch {
		case errs[i] != nil:
			t.Fatalf("%s: contender %d: %v, want a win or ErrConflict", what, i, errs[i])
		case won[i] && winner >= 0:
			t.Fatalf("%s: contenders %d and %d both won", what, winner, i)
		case won[i]:
			winner = i
		}
	}
	if winner < 0 {
		t.Fatalf("%s: nobody won", what)
	}
	return winner
}
