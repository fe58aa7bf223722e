package sqlite

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/store/sqlstore"
)

// A journal record (journal.go) is binary, so that writing one costs well
// under a microsecond:
//
//	record  = crc32c(payload) u32 | len(payload) u32 | payload   (little endian)
//	payload = version byte (1) | seq uvarint | kind byte | state byte |
//	          reverts uvarint | created varint | updated varint |
//	          execution id | connector | method | name | args | result | error
//
// where times are Unix nanoseconds and each string or raw JSON value is
// its length (uvarint) and its bytes. A reader stops at the first record
// that is cut short, fails its checksum or does not decode, and at one
// that could not have been written to this journal: of another execution
// (a file copied or renamed), with a seq or reverts that does not fit an
// int, or a kind or state the log refuses. The checksum finds a torn
// write, not a file someone made.

const journalVersion = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendJournalRecord appends e's record to buf.
func appendJournalRecord(buf []byte, e codemode.Entry) []byte {
	start := len(buf)
	buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0) // checksum and length, set below
	buf = append(buf, journalVersion)
	buf = binary.AppendUvarint(buf, uint64(e.Seq))
	buf = append(buf, byte(e.Kind), byte(e.State))
	buf = binary.AppendUvarint(buf, uint64(e.Reverts))
	buf = binary.AppendVarint(buf, stampNanos(e.CreatedAt))
	buf = binary.AppendVarint(buf, stampNanos(e.UpdatedAt))
	for _, s := range []string{e.ExecutionID, e.Connector, e.Method, e.Name} {
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	for _, b := range [][]byte{e.Args, e.Result, []byte(e.Error)} {
		buf = binary.AppendUvarint(buf, uint64(len(b)))
		buf = append(buf, b...)
	}
	payload := buf[start+8:]
	binary.LittleEndian.PutUint32(buf[start:], crc32.Checksum(payload, castagnoli))
	binary.LittleEndian.PutUint32(buf[start+4:], uint32(len(payload)))
	return buf
}

// stampNanos is t in Unix nanoseconds, 0 for the zero time.
func stampNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromStamp is the inverse of stampNanos.
func fromStamp(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// parseJournal returns the entries of execution id's journal's records up
// to the first one that is cut short, damaged, not a record of this
// version or not one of id's.
func parseJournal(b []byte, id string) []codemode.Entry {
	var out []codemode.Entry
	for len(b) >= 8 {
		sum := binary.LittleEndian.Uint32(b)
		n := binary.LittleEndian.Uint32(b[4:])
		if n == 0 || uint64(n) > uint64(len(b)-8) {
			break
		}
		payload := b[8 : 8+n]
		if crc32.Checksum(payload, castagnoli) != sum {
			break
		}
		e, err := decodeJournalPayload(payload)
		if err != nil || e.ExecutionID != id || sqlstore.CheckInsert(e) != nil {
			break
		}
		out = append(out, e)
		b = b[8+n:]
	}
	return out
}

var errBadRecord = errors.New("bad journal record")

// decodeJournalPayload decodes one record's payload.
func decodeJournalPayload(p []byte) (codemode.Entry, error) {
	var e codemode.Entry
	d := recordReader{b: p}
	if d.byte() != journalVersion {
		return e, errBadRecord
	}
	e.Seq = d.int()
	e.Kind = codemode.EntryKind(d.byte())
	e.State = codemode.EntryState(d.byte())
	e.Reverts = d.int()
	e.CreatedAt = fromStamp(d.varint())
	e.UpdatedAt = fromStamp(d.varint())
	e.ExecutionID, e.Connector, e.Method, e.Name = d.string(), d.string(), d.string(), d.string()
	e.Args, e.Result = d.bytes(), d.bytes()
	e.Error = d.string()
	if d.err || len(d.b) != 0 {
		return codemode.Entry{}, errBadRecord
	}
	return e, nil
}

// recordReader reads a payload; a read past its end sets err.
type recordReader struct {
	b   []byte
	err bool
}

func (d *recordReader) byte() byte {
	if len(d.b) < 1 {
		d.err = true
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *recordReader) uvarint() uint64 { return readVarint(d, binary.Uvarint) }
func (d *recordReader) varint() int64   { return readVarint(d, binary.Varint) }

// readVarint reads one varint with read (binary.Uvarint or binary.Varint).
func readVarint[T uint64 | int64](d *recordReader, read func([]byte) (T, int)) T {
	v, n := read(d.b)
	if n <= 0 {
		d.err = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

// int reads a uvarint that must fit an int (never wrapped to a negative
// one).
func (d *recordReader) int() int {
	v := d.uvarint()
	if v > math.MaxInt {
		d.err = true
		return 0
	}
	return int(v)
}

// bytes reads a length and that many bytes; an empty value is nil (no
// value).
func (d *recordReader) bytes() []byte {
	n := d.uvarint()
	if d.err || n > uint64(len(d.b)) {
		d.err = true
		return nil
	}
	if n == 0 {
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *recordReader) string() string { return string(d.bytes()) }
