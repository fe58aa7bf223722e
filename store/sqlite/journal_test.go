package sqlite

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/store/storetest"
)

// The journal lives beside the database, private like it; a journal not
// dropped (the process died) stays for the next process to apply.
func TestJournalFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "codemode.db")
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	run := storetest.NewExecution("exec_f", codemode.StatusRunning)
	run.Owner = "own_dead"
	if err := s.CreateExecution(ctx, run); err != nil {
		t.Fatal(err)
	}
	big := storetest.NewEntry("exec_f", 2, codemode.EntryExecuting)
	big.Args = json.RawMessage(`{"text":"` + strings.Repeat("x", 200<<10) + `"}`)
	if err := s.Journal(ctx, "exec_f", []codemode.Entry{storetest.NewEntry("exec_f", 1, codemode.EntryExecuting), big}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(path+"-ahead", "exec_f")
	for name, want := range map[string]os.FileMode{path + "-ahead": 0o700 | os.ModeDir, file: 0o600} {
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode() != want {
			t.Errorf("%s: mode %v, want %v", name, st.Mode(), want)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("the journal of a store closed without DropJournal is gone: %v", err)
	}
	next := openAt(t, path, Options{})
	if err := next.RecoverExecution(ctx, &codemode.Execution{ID: "exec_f", Status: codemode.StatusError}, codemode.StatusRunning, "own_dead", "unknown"); err != nil {
		t.Fatal(err)
	}
	log, err := next.Entries(ctx, "exec_f")
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[0].State != codemode.EntryUnknown || len(log[1].Args) != len(big.Args) {
		t.Errorf("log after recovery: %d entries %v", len(log), log)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("journal after recovery: %v, want it removed", err)
	}
}

// With synchronous FULL (durable across a power loss) a journal record
// written ahead of a call (executing) is flushed to disk before Journal
// returns, as a commit would be, and a result is not (the next flush takes
// it along); with NORMAL nothing is flushed.
func TestJournalFlushedWhenFull(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		sync string
		want int
	}{{"normal", 0}, {"full", 3}} {
		flushes := 0
		s := openAt(t, filepath.Join(t.TempDir(), "j.db"), Options{Synchronous: tt.sync})
		if err := s.CreateExecution(ctx, storetest.NewExecution("exec_d", codemode.StatusRunning)); err != nil {
			t.Fatal(err)
		}
		for seq := 1; seq <= 3; seq++ {
			for _, st := range []codemode.EntryState{codemode.EntryExecuting, codemode.EntryApplied} {
				batch := []codemode.Entry{storetest.NewEntry("exec_d", seq, st)}
				if s.journals.flushes(batch) {
					flushes++
				}
				if err := s.Journal(ctx, "exec_d", batch); err != nil {
					t.Fatal(err)
				}
			}
		}
		if flushes != tt.want {
			t.Errorf("synchronous %s: %d flushes for 3 calls, want %d", tt.sync, flushes, tt.want)
		}
		got, err := s.journals.read("exec_d")
		if err != nil || len(got) != 6 {
			t.Errorf("synchronous %s: journal holds %d records (%v), want 6", tt.sync, len(got), err)
		}
	}
}

// An execution id that is not a plain file name gets a hex file name.
func TestJournalFileName(t *testing.T) {
	j := newJournals("/db", false, 0)
	for id, want := range map[string]string{
		"exec_0123abcd": "/db-ahead/exec_0123abcd",
		"../x":          "/db-ahead/x2e2e2f78",
		"":              "/db-ahead/x",
	} {
		if got := j.path(id); got != want {
			t.Errorf("path(%q) = %q, want %q", id, got, want)
		}
	}
}

// journalBytes returns the journal records of entries.
func journalBytes(t *testing.T, entries []codemode.Entry) []byte {
	t.Helper()
	dir := t.TempDir()
	s := openAt(t, filepath.Join(dir, "j.db"), Options{})
	ctx := context.Background()
	if err := s.CreateExecution(ctx, storetest.NewExecution("exec_t", codemode.StatusRunning)); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := s.Journal(ctx, "exec_t", []codemode.Entry{e}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(s.journals.path("exec_t"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A record cut by a crash, or damaged, ends the journal: the records
// before it are read, nothing after it.
func TestJournalTornRecords(t *testing.T) {
	var entries []codemode.Entry
	var ends []int // where each record ends in the file
	var file []byte
	for seq := 1; seq <= 3; seq++ {
		e := storetest.NewEntry("exec_t", seq, codemode.EntryExecuting)
		e.Args = json.RawMessage(`{"text":"line\nbreak ü"}`)
		e.Result = json.RawMessage(`{"n":` + strconv.Itoa(seq) + `}`)
		e.Error, e.Reverts = "partly", seq-1
		e.CreatedAt = time.Date(2026, 3, 1, 12, 0, seq, 5, time.UTC)
		entries = append(entries, e)
		file = appendJournalRecord(file, e)
		ends = append(ends, len(file))
	}
	// The file holds the records, then zeros (room reserved ahead).
	if b := journalBytes(t, entries); len(b) < len(file) || !bytes.Equal(b[:len(file)], file) || bytes.ContainsFunc(b[len(file):], func(r rune) bool { return r != 0 }) {
		t.Fatalf("the journal file holds %d bytes, want the %d bytes of the records and zeros", len(b), len(file))
	}
	if diff := cmp.Diff(entries, parseJournal(append(bytes.Clone(file), make([]byte, 100)...), "exec_t")); diff != "" {
		t.Fatalf("records followed by zeros read back (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(entries, parseJournal(file, "exec_t")); diff != "" {
		t.Fatalf("records read back (-want +got):\n%s", diff)
	}
	seqs := func(es []codemode.Entry) []int {
		out := []int{}
		for _, e := range es {
			out = append(out, e.Seq)
		}
		return out
	}
	for cut := 0; cut <= len(file); cut++ {
		want := []int{}
		for i, end := range ends {
			if cut >= end {
				want = append(want, i+1)
			}
		}
		if diff := cmp.Diff(want, seqs(parseJournal(file[:cut], "exec_t"))); diff != "" {
			t.Fatalf("cut at %d (-want +got):\n%s", cut, diff)
		}
	}
	for i := range file {
		damaged := bytes.Clone(file)
		damaged[i] ^= 0x01
		got := seqs(parseJournal(damaged, "exec_t"))
		for r, end := range ends {
			if i < end { // the damaged record and those after it are dropped
				if len(got) > r {
					t.Fatalf("byte %d damaged: read records %v, want only those before record %d", i, got, r+1)
				}
				break
			}
		}
	}
}

// The reader takes any bytes: it never fails, and what follows complete
// records (a torn or damaged tail) never changes them.
func FuzzParseJournal(f *testing.F) {
	var seed []byte
	for seq := 1; seq <= 2; seq++ {
		seed = appendJournalRecord(seed, storetest.NewEntry("exec_t", seq, codemode.EntryExecuting))
	}
	f.Add(seed, []byte{1, 2, 3, 4})
	f.Add([]byte("garbage"), []byte{0})
	f.Fuzz(func(t *testing.T, b, tail []byte) {
		whole := parseJournal(b, "exec_t")
		n := 0
		for _, e := range whole {
			n = len(appendJournalRecord(nil, e)) + n
		}
		if n > len(b) {
			t.Fatalf("%d records read from %d bytes take %d bytes", len(whole), len(b), n)
		}
		got := parseJournal(append(bytes.Clone(b[:n]), tail...), "exec_t")
		if len(got) < len(whole) || !cmp.Equal(whole, got[:len(whole)]) {
			t.Fatalf("a tail changed the records before it: %d records, then %d", len(whole), len(got))
		}
	})
}

// A journal's file name says whose it is: a record of another execution in
// it (a file copied or renamed beside the database) is not applied to that
// other execution's log when this one is recovered; the reader stops there
// as at a damaged record.
func TestJournalOfAnotherExecution(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	for _, id := range []string{"exec_a", "exec_b"} {
		run := storetest.NewExecution(id, codemode.StatusRunning)
		run.Owner = "own_dead"
		if err := s.CreateExecution(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.InsertEntry(ctx, storetest.NewEntry("exec_a", 1, codemode.EntryExecuting)); err != nil {
		t.Fatal(err)
	}
	done := storetest.NewEntry("exec_a", 1, codemode.EntryApplied)
	done.Result = json.RawMessage(`{"forged":true}`)
	mine := storetest.NewEntry("exec_b", 1, codemode.EntryApplied)
	if err := os.MkdirAll(s.journals.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := appendJournalRecord(appendJournalRecord(nil, mine), done)
	if err := os.WriteFile(s.journals.path("exec_b"), file, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.RecoverExecution(ctx, &codemode.Execution{ID: "exec_b", Status: codemode.StatusError}, codemode.StatusRunning, "own_dead", "unknown"); err != nil {
		t.Fatal(err)
	}
	a, err := s.Entries(ctx, "exec_a")
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 1 || a[0].State != codemode.EntryExecuting || a[0].Result != nil {
		t.Errorf("exec_a's log after exec_b's recovery: %+v; want its entry #1 executing, as it was", a)
	}
	b, err := s.Entries(ctx, "exec_b")
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 1 || b[0].State != codemode.EntryApplied {
		t.Errorf("exec_b's log after its recovery: %+v; want its own entry #1 applied", b)
	}
}

// A record that Journal could not have written ends the journal like a
// damaged one: a seq or a reverts too large for an int (not read back
// wrapped to a negative number), a kind or a state the log refuses (which
// would fail every recovery of the run).
func TestJournalRecordsNotWritten(t *testing.T) {
	ok := storetest.NewEntry("exec_t", 1, codemode.EntryApplied)
	for _, bad := range []codemode.Entry{
		func() codemode.Entry { e := ok; e.Seq = -1; return e }(),
		func() codemode.Entry { e := ok; e.Reverts = math.MinInt; return e }(),
		func() codemode.Entry { e := ok; e.Seq, e.Kind = 2, 99; return e }(),
		func() codemode.Entry { e := ok; e.Seq, e.State = 2, 99; return e }(),
	} {
		got := parseJournal(appendJournalRecord(appendJournalRecord(nil, ok), bad), "exec_t")
		if len(got) != 1 || got[0].Seq != 1 {
			t.Errorf("a record of seq %d, reverts %d, kind %d, state %d read back as %+v; want the reader to stop before it", bad.Seq, bad.Reverts, int(bad.Kind), int(bad.State), got)
		}
	}
}

// A journal recovery must not read whole, one over maxJournal (a sparse
// file here) or a pipe, is refused naming the file: that run stays as it
// is with its log, its journal kept, and another run's recovery is not
// held up by it. The bound follows the quota of a run's log: a store
// whose runs may log 512 MiB reads a journal of up to 2 GiB.
func TestJournalTooLargeIsRefused(t *testing.T) {
	for _, tt := range []struct {
		quota int64
		size  int64
		bound string
	}{
		{0, 1 << 30, "1 GiB, over the 256 MiB"},
		{64 << 20, 1 << 30, "1 GiB, over the 256 MiB"},
		{512 << 20, 3 << 30, "3 GiB, over the 2 GiB"},
	} {
		t.Run(short.Bytes(tt.quota), func(t *testing.T) { testJournalTooLarge(t, tt.quota, tt.size, tt.bound) })
	}
	// A quota as large as it can be bounds nothing, rather than wrapping
	// around to a bound below the default's.
	if got := maxJournal(math.MaxInt64); got != 1<<62 {
		t.Errorf("the bound of a journal for a quota of MaxInt64 = %d, want 2^62", got)
	}
}

// testJournalTooLarge recovers two runs, one with a journal of size bytes
// in a store whose runs may log quota, and checks that it is refused
// saying bound.
func testJournalTooLarge(t *testing.T, quota, size int64, bound string) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "codemode.db")
	s := openAt(t, path, Options{MaxRunLog: quota})
	for _, id := range []string{"exec_big", "exec_ok"} {
		run := storetest.NewExecution(id, codemode.StatusRunning)
		run.Owner = "own_dead"
		if err := s.CreateExecution(ctx, run); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertEntry(ctx, storetest.NewEntry(id, 1, codemode.EntryApplied)); err != nil {
			t.Fatal(err)
		}
		if err := s.Journal(ctx, id, []codemode.Entry{storetest.NewEntry(id, 2, codemode.EntryExecuting)}); err != nil {
			t.Fatal(err)
		}
	}
	big := s.journals.path("exec_big")
	if err := os.Truncate(big, size); err != nil {
		t.Fatal(err)
	}
	recover := func(id string) error {
		return s.RecoverExecution(ctx, &codemode.Execution{ID: id, Status: codemode.StatusError}, codemode.StatusRunning, "own_dead", "unknown")
	}
	err := recover("exec_big")
	if err == nil || !strings.Contains(err.Error(), big+" is "+bound+" a journal may be") {
		t.Errorf("recovery of a run with a journal of %s (quota %s): %v, want it refused naming %s, %s", short.Bytes(size), short.Bytes(quota), err, big, bound)
	}
	if err := recover("exec_ok"); err != nil {
		t.Fatalf("recovery of another run: %v", err)
	}
	for id, want := range map[string]struct {
		status codemode.ExecStatus
		states []codemode.EntryState
	}{
		"exec_big": {codemode.StatusRunning, []codemode.EntryState{codemode.EntryApplied}},
		"exec_ok":  {codemode.StatusError, []codemode.EntryState{codemode.EntryApplied, codemode.EntryUnknown}},
	} {
		e, err := s.GetExecution(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		log, err := s.Entries(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var states []codemode.EntryState
		for _, x := range log {
			states = append(states, x.State)
		}
		if e.Status != want.status || !slices.Equal(states, want.states) {
			t.Errorf("%s after recovery: %v with entries %v, want %v with %v", id, e.Status, states, want.status, want.states)
		}
	}
	if st, err := os.Stat(big); err != nil || st.Size() != size {
		t.Errorf("the refused journal: %v, want it left as it was", err)
	}
}
