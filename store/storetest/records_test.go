package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// testRecords checks connectors.Records, for a store that has it: records
// read back as written, newest first (ties: the last inserted first),
// kinds apart, a duplicate refused, fn stops the scan, and a delete says
// whether there was something to delete.
func testRecords(t *testing.T, f Factory) {
	ctx := context.Background()
	s := f.New(t)
	r := s.(connectors.Records)
	put := func(kind, id string, sec int) {
		t.Helper()
		v := json.RawMessage(`{"id":"` + id + `"}`)
		if err := r.PutRecord(ctx, connectors.Record{Kind: kind, ID: id, Value: v, CreatedAt: at(sec)}); err != nil {
			t.Fatalf("PutRecord(%s, %s): %v", kind, id, err)
		}
	}
	put("notes", "a", 1)
	put("notes", "b", 3)
	put("notes", "c", 2)
	put("notes", "d", 3) // ties with b: inserted later, listed first
	put("other", "a", 9)
	scan := func(kind string, max int) []string {
		t.Helper()
		var ids []string
		err := r.ScanRecords(ctx, kind, func(rec connectors.Record) bool {
			if rec.Kind != kind || string(rec.Value) != `{"id":"`+rec.ID+`"}` {
				t.Errorf("record %+v", rec)
			}
			ids = append(ids, rec.ID)
			return len(ids) < max
		})
		if err != nil {
			t.Fatalf("ScanRecords(%s): %v", kind, err)
		}
		return ids
	}
	if got, want := scan("notes", 99), []string{"d", "b", "c", "a"}; !slices.Equal(got, want) {
		t.Errorf("notes newest first: %v, want %v", got, want)
	}
	if got, want := scan("notes", 2), []string{"d", "b"}; !slices.Equal(got, want) {
		t.Errorf("scan stopped after 2: %v, want %v", got, want)
	}
	if got, want := scan("other", 99), []string{"a"}; !slices.Equal(got, want) {
		t.Errorf("other kind: %v, want %v", got, want)
	}
	err := r.PutRecord(ctx, connectors.Record{Kind: "notes", ID: "a", Value: json.RawMessage(`{}`)})
	if !errors.Is(err, connectors.ErrRecordExists) {
		t.Errorf("duplicate PutRecord: %v, want ErrRecordExists", err)
	}
	var created connectors.Record
	_ = r.ScanRecords(ctx, "other", func(rec connectors.Record) bool { created = rec; return false })
	if !created.CreatedAt.Equal(at(9)) {
		t.Errorf("CreatedAt %v, want %v", created.CreatedAt, at(9))
	}
	for _, tc := range []struct {
		id   string
		want bool
	}{{"b", true}, {"b", false}, {"zz", false}} {
		ok, err := r.DeleteRecord(ctx, "notes", tc.id)
		if err != nil || ok != tc.want {
			t.Errorf("DeleteRecord(notes, %s) = %v, %v; want %v", tc.id, ok, err, tc.want)
		}
	}
	if got, want := scan("notes", 99), []string{"d", "c", "a"}; !slices.Equal(got, want) {
		t.Errorf("after delete: %v, want %v", got, want)
	}
	// Another handle on the same database sees them.
	if got := f.Another(t, s).(connectors.Records); got != nil {
		var n int
		if err := got.ScanRecords(ctx, "notes", func(connectors.Record) bool { n++; return true }); err != nil || n != 3 {
			t.Errorf("another handle sees %d notes (%v), want 3", n, err)
		}
	}
}

// testReplaceRecord checks the compare-and-swap of connectors.Records:
// GetRecord reads what ReplaceRecord wrote, an insert (nil old) only when
// there is no record, a replace only from the stored value, a delete (nil
// new) only of the stored value, and CreatedAt kept by a replace.
func testReplaceRecord(t *testing.T, f Factory) {
	ctx := context.Background()
	r := f.New(t).(connectors.Records)
	get := func(id string) (string, error) {
		t.Helper()
		rec, err := r.GetRecord(ctx, "tokens", id)
		return string(rec.Value), err
	}
	swap := func(id, old, new string, want bool) {
		t.Helper()
		var o, n json.RawMessage
		if old != "" {
			o = json.RawMessage(old)
		}
		if new != "" {
			n = json.RawMessage(new)
		}
		ok, err := r.ReplaceRecord(ctx, "tokens", id, o, n)
		if err != nil || ok != want {
			t.Fatalf("ReplaceRecord(%s, %q → %q) = %v, %v; want %v", id, old, new, ok, err, want)
		}
	}
	if _, err := get("a"); !errors.Is(err, connectors.ErrRecordNotFound) {
		t.Fatalf("GetRecord of nothing: %v, want ErrRecordNotFound", err)
	}
	swap("a", "", `{"v":1}`, true)  // insert
	swap("a", "", `{"v":9}`, false) // there is one now
	if v, err := get("a"); v != `{"v":1}` || err != nil {
		t.Fatalf("after insert: %s, %v", v, err)
	}
	first, err := r.GetRecord(ctx, "tokens", "a")
	if err != nil || first.Kind != "tokens" || first.ID != "a" || first.CreatedAt.IsZero() {
		t.Fatalf("GetRecord: %+v, %v", first, err)
	}
	swap("a", `{"v":2}`, `{"v":3}`, false)  // not the stored value
	swap("a", `{"v": 1}`, `{"v":3}`, false) // byte for byte, not as JSON
	swap("a", `{"v":1}`, `{"v":2}`, true)
	if v, _ := get("a"); v != `{"v":2}` {
		t.Fatalf("after replace: %s", v)
	}
	if again, _ := r.GetRecord(ctx, "tokens", "a"); !again.CreatedAt.Equal(first.CreatedAt) {
		t.Errorf("CreatedAt moved from %v to %v", first.CreatedAt, again.CreatedAt)
	}
	swap("b", `{"v":2}`, `{"v":3}`, false) // no record b
	swap("a", `{"v":1}`, "", false)        // delete of a value no longer stored
	swap("a", `{"v":2}`, "", true)
	if _, err := get("a"); !errors.Is(err, connectors.ErrRecordNotFound) {
		t.Fatalf("after delete: %v, want ErrRecordNotFound", err)
	}
	if _, err := r.ReplaceRecord(ctx, "tokens", "a", nil, nil); err == nil {
		t.Error("ReplaceRecord with neither value: no error")
	}
	// Records of other kinds are apart.
	swap("a", "", `{"v":1}`, true)
	if _, err := r.GetRecord(ctx, "other", "a"); !errors.Is(err, connectors.ErrRecordNotFound) {
		t.Errorf("GetRecord of another kind: %v, want ErrRecordNotFound", err)
	}
}

// testReplaceRecordRace races swappers from the same old value, on one
// handle and on two handles of one database (two processes, two
// replicas): each round exactly one wins and the stored value is the
// winner's. This is what makes a token refresh happen once.
func testReplaceRecordRace(t *testing.T, f Factory) {
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d handles", n), func(t *testing.T) {
			ctx := context.Background()
			var stores []connectors.Records
			for _, s := range handles(t, f, n) {
				stores = append(stores, s.(connectors.Records))
			}
			const rounds, contenders = 30, 4
			cur := json.RawMessage(`{"round":0}`)
			if ok, err := stores[0].ReplaceRecord(ctx, "tokens", "x", nil, cur); !ok || err != nil {
				t.Fatalf("insert: %v, %v", ok, err)
			}
			for round := 1; round <= rounds; round++ {
				winner := race(t, fmt.Sprintf("round %d", round), contenders, func(c int) (bool, error) {
					next := json.RawMessage(fmt.Sprintf(`{"round":%d,"winner":%d}`, round, c))
					return stores[c%len(stores)].ReplaceRecord(ctx, "tokens", "x", cur, next)
				})
				rec, err := stores[len(stores)-1].GetRecord(ctx, "tokens", "x")
				want := fmt.Sprintf(`{"round":%d,"winner":%d}`, round, winner)
				if err != nil || string(rec.Value) != want {
					t.Fatalf("round %d: stored %s (%v), want %s", round, rec.Value, err, want)
				}
				cur = rec.Value
			}
		})
	}
}
