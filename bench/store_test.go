package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/pgtest"
)

// BenchmarkStore measures what the store costs, SQLite against PostgreSQL
// (a throwaway cluster on this machine, reached over a Unix socket, with
// fsync on as a real server has it), in one run, with in-process
// isolation (the store's cost does not depend on it):
//
//   - via=direct: a direct tools/call of get-sum, the baseline;
//   - call=read: a read-only call inside a program (its log entries are
//     written in groups);
//   - call=sideeffect: a call not known to be read-only (record-sum),
//     logged before it is made: a journal append on SQLite, a commit of its
//     own (one round trip) on PostgreSQL;
//   - run=trivial: a program `1 + 1` end to end (a new execution record,
//     a pass, the outcome);
//   - resume=1000: approving a run whose log holds 1,000 read-only calls
//     (they are replayed from the log) and then makes the approved call.
func BenchmarkStore(b *testing.B) {
	for _, store := range []string{"sqlite", "postgres"} {
		b.Run("store="+store, func(b *testing.B) {
			location := ""
			if store == "postgres" {
				location = pgtest.DurableDatabase(b)
			}
			direct, cm := startPairOn(b, "inprocess", location)
			b.Run("via=direct", each(func(ctx context.Context) error { return directSum(ctx, direct, "get-sum") }))
			b.Run("call=read", programCalls("get_sum", cm))
			b.Run("call=sideeffect", programCalls("record_sum", cm))
			b.Run("run=trivial", func(b *testing.B) {
				ctx := context.Background()
				b.ResetTimer()
				for range b.N {
					if res, err := cm.run(ctx, "1 + 1"); err != nil || string(res) != "2" {
						b.Fatalf("1 + 1 = %s, %v", res, err)
					}
				}
			})
			b.Run("resume=1000", func(b *testing.B) {
				ctx := context.Background()
				code := `async () => { let s = 0; for (let i = 0; i < 1000; i++) s += await fx.get_sum({ a: 1, b: 2 }); await fx.delete_thing({ id: "x" }); return s }`
				for range b.N {
					b.StopTimer()
					id, err := paused(ctx, cm, code)
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					text, err := cm.text(ctx, "codemode_approve", map[string]any{"executionId": id})
					if err != nil {
						b.Fatal(err)
					}
					var o outcome
					if err := json.Unmarshal([]byte(text), &o); err != nil || o.Status != "completed" || string(o.Result) != "3000" {
						b.Fatalf("approve: %s", text)
					}
				}
			})
		})
	}
}

// paused runs code, which must pause, and returns its execution id.
func paused(ctx context.Context, p *peer, code string) (string, error) {
	text, err := p.text(ctx, "codemode", map[string]any{"code": code})
	if err != nil {
		return "", err
	}
	var o struct {
		Status      string `json:"status"`
		ExecutionID string `json:"executionId"`
	}
	if err := json.Unmarshal([]byte(text), &o); err != nil || o.Status != "paused" {
		return "", fmt.Errorf("run did not pause: %s", text)
	}
	return o.ExecutionID, nil
}
