package sqlite

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/store/storetest"
)

// Where the file cannot be mapped (no fallocate), records are written
// with write(2) and read back the same; a mapped file grows by doubling
// to take a record larger than what is left.
func TestJournalSinks(t *testing.T) {
	for _, mapped := range []bool{false, true} {
		f, err := os.OpenFile(filepath.Join(t.TempDir(), "j"), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		s := sink{f: f}
		if mapped {
			s = newSink(f)
			if s.m == nil {
				t.Fatal("the file could not be mapped")
			}
		}
		var want []codemode.Entry
		var size int
		for seq := 1; seq <= 3; seq++ {
			e := storetest.NewEntry("exec_s", seq, codemode.EntryExecuting)
			e.Args = []byte(`""`)
			if seq == 2 {
				e.Args = []byte(`"` + string(bytes.Repeat([]byte("y"), mapChunk)) + `"`)
			}
			want = append(want, e)
			rec := appendJournalRecord(nil, e)
			size += len(rec)
			if err := s.write(rec); err != nil {
				t.Fatal(err)
			}
		}
		if mapped && len(s.m) < size {
			t.Errorf("mapping of %d bytes holds %d bytes of records", len(s.m), size)
		}
		if err := s.close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if diff := cmp.Diff(want, parseJournal(b)); diff != "" {
			t.Errorf("mapped %v: records read back (-want +got):\n%s", mapped, diff)
		}
	}
}
