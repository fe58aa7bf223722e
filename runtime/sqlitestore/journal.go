package sqlitestore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// The journal (codemode.Journaler): log entries written ahead of a side
// effect without a commit.
//
// A commit costs far more than its SQLite work here: its system calls go
// through Go's syscall package, which wakes the Go runtime's monitor
// thread whenever the process was idle, and on a virtual machine each
// wake-up is a costly exit (BENCHMARKS.md). A pass that makes a call with
// a side effect every few hundred µs would pay that per call. A journal
// record instead is one write(2), made as a raw system call for records up
// to rawRecordLimit, to a file beside the database: once it returns, the
// record is in the kernel and survives the death of this process (not a
// power loss, which synchronous NORMAL does not promise either).
//
// Layout: one file per execution, <database>-ahead/<execution id>, mode
// 0600 in a 0700 directory (it holds call arguments and results, like the
// database). Each record is one line: the CRC-32C of the JSON in 8 hex
// digits, a space, a codemode.Entry as JSON, a newline. A reader stops at
// the first line that is incomplete or fails its checksum (a record cut
// by the crash).
//
// Invariant: a journal only ever adds to what the tables hold. Every
// record is the entry as it was at some point of the pass; applying a
// journal (RecoverExecution) inserts the entries the tables lack and
// moves entries the tables still hold executing to their journaled state,
// and nothing else. So a journal may hold records already committed, may
// be applied more than once, and is removed only once its pass committed
// everything (DropJournal) or after it was applied.

// rawRecordLimit is the largest record written with a raw system call; a
// larger one (a call with big arguments) is written through *os.File,
// which may block without holding up the scheduler.
const rawRecordLimit = 64 << 10

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// journals holds the journals this store has open.
type journals struct {
	dir string // <database>-ahead

	mu    sync.Mutex
	files map[string]*os.File // by execution id; guarded by mu
}

func newJournals(dbPath string) *journals {
	return &journals{dir: dbPath + "-ahead", files: map[string]*os.File{}}
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
	var buf []byte
	for _, e := range entries {
		if e.ExecutionID != id {
			return fmt.Errorf("journal of %s: entry #%d belongs to %s", id, e.Seq, e.ExecutionID)
		}
		if err := checkInsert(e); err != nil {
			return fmt.Errorf("journal of %s: %w", id, err)
		}
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("journal of %s: encode entry #%d: %w", id, e.Seq, err)
		}
		buf = fmt.Appendf(buf, "%08x ", crc32.Checksum(b, castagnoli))
		buf = append(buf, b...)
		buf = append(buf, '\n')
	}
	f, err := s.journals.open(id)
	if err != nil {
		return err
	}
	if err := appendRecord(f, buf); err != nil {
		return fmt.Errorf("journal of %s: write: %w", id, err)
	}
	return nil
}

// open returns the open journal of id, creating (or emptying) its file.
func (j *journals) open(id string) (*os.File, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if f := j.files[id]; f != nil {
		return f, nil
	}
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return nil, fmt.Errorf("journal of %s: %w", id, err)
	}
	f, err := os.OpenFile(j.path(id), os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal of %s: %w", id, err)
	}
	j.files[id] = f
	return f, nil
}

// DropJournal closes and removes id's journal; without one it does
// nothing.
func (s *Store) DropJournal(_ context.Context, id string) error {
	return s.journals.drop(id)
}

func (j *journals) drop(id string) error {
	j.mu.Lock()
	f := j.files[id]
	delete(j.files, id)
	j.mu.Unlock()
	var errs []error
	if f != nil {
		errs = append(errs, f.Close())
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
	for id, f := range j.files {
		errs = append(errs, f.Close())
		delete(j.files, id)
	}
	return errors.Join(errs...)
}

// read returns the entries of id's journal up to the first record that is
// incomplete or damaged; no journal is no entries.
func (j *journals) read(id string) ([]codemode.Entry, error) {
	b, err := os.ReadFile(j.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read journal of %s: %w", id, err)
	}
	return parseJournal(b), nil
}

// parseJournal returns the entries of a journal's records up to the first
// one that is incomplete or fails its checksum.
func parseJournal(b []byte) []codemode.Entry {
	var out []codemode.Entry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, len(b)+1)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) < 10 || line[8] != ' ' {
			break
		}
		var sum [4]byte
		if _, err := hex.Decode(sum[:], line[:8]); err != nil {
			break
		}
		body := line[9:]
		if crc32.Checksum(body, castagnoli) != uint32(sum[0])<<24|uint32(sum[1])<<16|uint32(sum[2])<<8|uint32(sum[3]) {
			break
		}
		var e codemode.Entry
		if err := json.Unmarshal(body, &e); err != nil {
			break
		}
		out = append(out, e)
	}
	// A last line without its newline was cut while being written: the
	// scanner returns it, but the checksum, computed over the whole JSON,
	// rejects it unless the cut fell exactly on the newline, which leaves
	// a complete record.
	return out
}
