package sqlite

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/store/sqlstore"
)

// The journal (codemode.Journaler): log entries written ahead of a side
// effect without a commit.
//
// A commit costs far more than its SQLite work here: its system calls go
// through Go's syscall package, which wakes the Go runtime's monitor
// thread whenever the process was idle, and on a virtual machine each
// wake-up is a costly exit (BENCHMARKS.md). A pass that makes a call with
// a side effect every few hundred µs would pay that per call. A journal
// record is instead one write(2) at the end of a file beside the
// database: once it returns the record is in the kernel's page cache and
// survives the death of this process (not a power loss, which synchronous
// NORMAL does not promise either). With synchronous FULL, which does
// promise it, Journal also flushes the file to disk (fsync) before it
// returns when it records an entry executing (written ahead of a call),
// and a new journal's directory entry with it: a side effect is then
// never made before its record is on disk, at the price of a flush per
// call, as a commit would cost. A result record is not flushed on its
// own: the next call's flush takes it along, and one lost to a power loss
// leaves its call unknown, as if in flight.
//
// Measured against a commit before each side effect (issue 28, item 3;
// BENCHMARKS.md, "Fast paths that pay for themselves"), the journal keeps
// the side-effecting call within its ratio bar. Copying records into the
// file mapped in memory, which needs no system call, measured the same end
// to end as a write(2) each, so the simpler write is what remains.
//
// Layout: one file per execution, <database>-ahead/<execution id>, mode
// 0600 in a 0700 directory (it holds call arguments and results, like the
// database). Each record is one codemode.Entry, binary and checksummed
// (journal_codec.go); a reader stops at the first record that is cut short
// or damaged (a record cut by the crash) or that Journal could not have
// written there (another execution's).
//
// Invariant: a journal only ever adds to what the tables hold. Every
// record is the entry as it was at some point of the pass; applying a
// journal (RecoverExecution) inserts the entries the tables lack and
// moves entries the tables still hold executing to their journaled state,
// and nothing else. So a journal may hold records already committed, may
// be applied more than once, and is removed only once its pass committed
// everything (DropJournal) or after it was applied.

// journals holds the journals this store has open.
type journals struct {
	dir string // <database>-ahead
	// durable: every record is flushed to disk before Journal returns
	// (synchronous FULL).
	durable bool
	// max bounds the journal recovery reads (maxJournal).
	max int64

	mu    sync.Mutex
	files map[string]*journalFile // by execution id; guarded by mu
}

func newJournals(dbPath string, durable bool, maxRunLog int64) *journals {
	return &journals{dir: dbPath + "-ahead", durable: durable, max: maxJournal(maxRunLog), files: map[string]*journalFile{}}
}

// journalFile is one open journal; records are written at its end.
type journalFile struct {
	f *os.File

	mu  sync.Mutex
	buf []byte // the records being added; reused; guarded by mu
	end int64  // where the next records go; guarded by mu
}

// safeName is what an execution id may look like to be a file name as is.
var safeName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// path returns the journal file of execution id.
func (j *journals) path(id string) string {
	name := id
	if !safeName.MatchString(id) {
		name = "x" + hex.EncodeToString([]byte(id))
	}
	return filepath.Join(j.dir, name)
}

// Journal appends entries of execution id to its journal, starting an
// empty one if this store has none open for id.
func (s *Store) Journal(ctx context.Context, id string, entries []codemode.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	for _, e := range entries {
		if e.ExecutionID != id {
			return fmt.Errorf("journal of %s: entry #%d belongs to %s", id, e.Seq, e.ExecutionID)
		}
		if err := sqlstore.CheckInsert(e); err != nil {
			return fmt.Errorf("journal of %s: %w", id, err)
		}
		if e.State == codemode.EntryWaiting || e.Task != "" {
			return fmt.Errorf("journal of %s: entry #%d: a downstream task's id is committed, not journaled", id, e.Seq)
		}
	}
	jf, err := s.journals.open(id)
	if err != nil {
		return err
	}
	jf.mu.Lock()
	defer jf.mu.Unlock()
	jf.buf = jf.buf[:0]
	for _, e := range entries {
		jf.buf = appendJournalRecord(jf.buf, e)
	}
	// On a failure the end stays: the next records overwrite what part of
	// these was written, so no damaged record hides the ones after it.
	if _, err := jf.f.WriteAt(jf.buf, jf.end); err != nil {
		return fmt.Errorf("journal of %s: write: %w", id, err)
	}
	jf.end += int64(len(jf.buf))
	if s.journals.flushes(entries) {
		if err := jf.f.Sync(); err != nil {
			return fmt.Errorf("journal of %s: flush to disk: %w", id, err)
		}
	}
	return nil
}

// open returns the open journal of id, creating (or emptying) its file.
func (j *journals) open(id string) (*journalFile, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if jf := j.files[id]; jf != nil {
		return jf, nil
	}
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return nil, fmt.Errorf("journal of %s: %w", id, err)
	}
	f, err := os.OpenFile(j.path(id), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal of %s: %w", id, err)
	}
	if j.durable {
		// The new file's name must be on disk before a record in it
		// counts as flushed.
		if err := syncDir(j.dir); err != nil {
			return nil, errors.Join(fmt.Errorf("journal of %s: %w", id, err), f.Close())
		}
	}
	jf := &journalFile{f: f}
	j.files[id] = jf
	return jf, nil
}

// flushes reports whether Journal flushes entries to disk before it
// returns: with synchronous FULL (durable across a power loss), when they
// hold one recorded executing, ahead of its call, as a commit would be; a
// result is not flushed (the next flush takes it along).
func (j *journals) flushes(entries []codemode.Entry) bool {
	if !j.durable {
		return false
	}
	for _, e := range entries {
		if e.State == codemode.EntryExecuting {
			return true
		}
	}
	return false
}

// syncDir flushes directory dir's entries to disk.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// close releases the journal's file (it stays on disk).
func (jf *journalFile) close() error {
	jf.mu.Lock()
	defer jf.mu.Unlock()
	return jf.f.Close()
}

// DropJournal closes and removes id's journal; without one it does
// nothing.
func (s *Store) DropJournal(_ context.Context, id string) error {
	return s.journals.drop(id)
}

func (j *journals) drop(id string) error {
	j.mu.Lock()
	jf := j.files[id]
	delete(j.files, id)
	j.mu.Unlock()
	var errs []error
	if jf != nil {
		errs = append(errs, jf.close())
	}
	if err := os.Remove(j.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("drop journal of %s: %w", id, err)
	}
	return nil
}

// close closes the open journals, leaving their files (a pass that has
// not dropped its journal did not commit everything in it).
func (j *journals) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	var errs []error
	for id, jf := range j.files {
		errs = append(errs, jf.close())
		delete(j.files, id)
	}
	return errors.Join(errs...)
}

// RecoverExecution is sqlstore's, applying first, in the same IMMEDIATE
// transaction, the entries the execution's journal holds (journal.go);
// the journal is removed once that is committed.
func (s *Store) RecoverExecution(ctx context.Context, e *codemode.Execution, from codemode.ExecStatus, owner, note string) error {
	journaled, err := s.journals.read(e.ID)
	if err != nil {
		return fmt.Errorf("recover execution %s: %w", e.ID, err)
	}
	if err := s.Recover(ctx, e, from, owner, note, journaled); err != nil {
		return err
	}
	if err := s.journals.drop(e.ID); err != nil {
		s.logger.WarnContext(ctx, "recovered execution's journal not removed", "execution", e.ID, "err", err)
	}
	return nil
}

// maxJournal bounds the journal recovery reads, whole, into memory: four
// times the quota of a run's log (Options.MaxRunLog), and at least
// 256 MiB, what four times the default quota is. A pass's journal holds
// each call's arguments about twice (ahead of the call, then with its
// result) and its results once, all within its run's log quota, and a new
// pass starts its journal empty; so only a file that Journal did not
// write, or one a process with a larger quota wrote, comes near it.
func maxJournal(maxRunLog int64) int64 {
	return max(256<<20, min(maxRunLog, 1<<60)*4)
}

// read returns the entries of id's journal up to the first record that is
// incomplete or damaged; no journal is no entries. A journal larger than
// j.max, or not a regular file (a pipe would block recovery), is
// refused, naming it: the run is then not recovered, and nothing of it
// or of other runs is lost.
func (j *journals) read(id string) ([]codemode.Entry, error) {
	path := j.path(id)
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read journal of %s: %w", id, err)
	}
	refused := func(what string) error {
		return fmt.Errorf("read journal of %s: %s is %s, which recovery does not read: the run is left as it is; "+
			"move the file away to recover it without its journal (the calls only the journal records are then missing from its log)", id, path, what)
	}
	switch {
	case !st.Mode().IsRegular():
		return nil, refused("not a regular file (" + st.Mode().Type().String() + ")")
	case st.Size() > j.max:
		return nil, refused(short.Bytes(st.Size()) + ", over the " + short.Bytes(j.max) + " a journal may be")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read journal of %s: %w", id, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, j.max+1))
	if err != nil {
		return nil, fmt.Errorf("read journal of %s: %w", id, err)
	}
	if int64(len(b)) > j.max { // it grew since
		return nil, refused("over the " + short.Bytes(j.max) + " a journal may be")
	}
	return parseJournal(b, id), nil
}
