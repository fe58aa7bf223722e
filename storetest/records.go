package storetest

import (
	"context"
	"encoding/json"
	"errors"
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
