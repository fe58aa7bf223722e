package codemode_test

import (
	"encoding/json"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// A task's TTL round-trips in whole milliseconds; a stored ttlMs no
// writer makes (negative, or beyond what a time.Duration holds, which
// would wrap to a TTL that never expires or expires at once) is an error,
// not a TTL.
func TestTaskTTLFromStoredJSON(t *testing.T) {
	b, err := json.Marshal(codemode.Task{TTL: 90 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var got codemode.Task
	if err := json.Unmarshal(b, &got); err != nil || got.TTL != 90*time.Minute {
		t.Fatalf("round trip of %s: %v, %v", b, got.TTL, err)
	}
	for _, in := range []string{
		`{"ttlMs":-1}`,
		`{"ttlMs":9223372036854775807}`, // wraps to -1ms
		`{"ttlMs":18446744073709552}`,   // too large for int64 nanoseconds
		`{"ttlMs":9223372036855}`,       // the first that does not fit
	} {
		var task codemode.Task
		if err := json.Unmarshal([]byte(in), &task); err == nil {
			t.Errorf("%s: TTL %v, want an error", in, task.TTL)
		}
	}
	var most codemode.Task
	if err := json.Unmarshal([]byte(`{"ttlMs":9223372036854}`), &most); err != nil || most.TTL <= 0 {
		t.Fatalf("the largest ttlMs a Duration holds: %v, %v", most.TTL, err)
	}
}
