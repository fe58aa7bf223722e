package server_test

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// measure is the size of v as internal/truncate's package comment defines
// the budget of max_result_chars: the characters of its compact JSON as
// encoding/json.Marshal writes it, 0 for none. It is computed apart from
// truncate, so that these tests check the documented measure rather than
// truncate's own count of it.
func measure[T json.RawMessage | []string](t *testing.T, v T) int {
	t.Helper()
	if len(v) == 0 {
		return 0
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("measure: %v", err)
	}
	return utf8.RuneCount(b)
}
