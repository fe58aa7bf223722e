package postgres

import (
	"context"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/pgtest"
	"github.com/codemode-mcp/codemode-mcp/store/storetest"
)

// BenchmarkWriteAhead is what logging a side-effecting call before it is
// made costs on PostgreSQL: one InsertEntry, a statement committed on its
// own. "roundtrip" is the floor, a SELECT 1 on the same pool; the durable
// cluster has PostgreSQL's defaults (fsync, synchronous_commit on), the
// other has them off, which shows how much of the cost is the disk.
// "writeentries" is what a side-effecting call inside a program writes
// before it is sent: its entry, executing, and the previous call's result,
// in one transaction.
func BenchmarkWriteAhead(b *testing.B) {
	for _, c := range []struct {
		name string
		url  func(testing.TB) string
	}{{"cluster=durable", pgtest.DurableDatabase}, {"cluster=nosync", pgtest.NewDatabase}} {
		b.Run(c.name, func(b *testing.B) {
			s := openAt(b, c.url(b), Options{})
			ctx := context.Background()
			if err := s.CreateExecution(ctx, storetest.NewExecution("exec_b", codemode.StatusRunning)); err != nil {
				b.Fatal(err)
			}
			b.Run("op=roundtrip", func(b *testing.B) {
				for range b.N {
					var one int
					if err := s.pool.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil {
						b.Fatal(err)
					}
				}
			})
			seq := 0
			b.Run("op=insertentry", func(b *testing.B) {
				for range b.N {
					seq++
					if err := s.InsertEntry(ctx, storetest.NewEntry("exec_b", seq, codemode.EntryExecuting)); err != nil {
						b.Fatal(err)
					}
				}
			})
			// What a side-effecting call in a program writes: its entry
			// executing, with the previous call's result.
			b.Run("op=writeentries", func(b *testing.B) {
				for range b.N {
					seq++
					prev := storetest.NewEntry("exec_b", seq-1, codemode.EntryApplied)
					err := s.WriteEntries(ctx, []codemode.Entry{storetest.NewEntry("exec_b", seq, codemode.EntryExecuting)},
						[]codemode.EntryUpdate{{Entry: prev, From: codemode.EntryExecuting}})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
