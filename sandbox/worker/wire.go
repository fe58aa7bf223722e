package worker

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"io"
	"math"
	"sync"
	"time"
)

// The worker protocol: frames over a pair of pipes between the parent (the
// Pool) and one worker process (Serve).
//
//	frame   = length:uint32be kind:uint8 id:uint32be payload
//	payload = fields encoded by enc: uvarints, varints, and byte strings as
//	          uvarint length + bytes
//
// length counts kind, id and payload. The worker says hello once, then
// serves one run at a time: the parent sends msgRun; the worker asks the
// parent for every host method (msgCall … msgService, each with an id of its
// own) and the parent answers each with msgReply under the same id; the
// worker ends the run with msgOutcome, once every request it made has its
// reply. msgCancel (parent → worker) cancels
// the run in progress; msgAbandon (worker → parent) cancels the context of
// one host call whose answer the program no longer needs (the parent still
// replies). A worker that breaks these rules, or the program's limits (see
// procRun.prepare), is broken: the parent kills it. A binary
// encoding keeps a host call to two small frames with no reflection.
const (
	msgHello      byte = iota + 1 // W→P: (id only; the parent has the pid from starting it)
	msgRun                        // P→W: a sandbox.Program
	msgCancel                     // P→W: reason (the outcome's error: "canceled", "canceled: …")
	msgCall                       // W→P: a request: seq, connector, method, args
	msgStepResult                 // W→P: a request: seq, name
	msgStepDone                   // W→P: a request: seq, name, value, errMsg
	msgService                    // W→P: a request: seq, name, args (a host-backed codemode function)
	msgAbandon                    // W→P: (id only)
	msgReply                      // P→W: reply status, found, value, message
	msgOutcome                    // W→P: an Outcome and the worker's flags
	msgCheck                      // W→P: a request: the static calls (JSON); the reply's value is the problems (JSON)
)

// maxFrame bounds one frame (a result, the arguments of a call, a value a
// connector returns) so that neither side allocates without bound because
// of the other.
const maxFrame = 64 << 20

const frameHeader = 9 // length, kind, id

// maxSeq bounds a call's seq on the wire: an int on every architecture,
// 32-bit ones too.
const maxSeq = math.MaxInt32

// maxInternalText bounds what Run's error keeps of a worker's internal
// failure (a host panic's stack trace fits): the text comes from the
// worker, and the error goes into the server's log.
const maxInternalText = 8 << 10

// errFrameTooLarge is returned for a frame past maxFrame.
var errFrameTooLarge = fmt.Errorf("sandbox: message larger than %d MiB", maxFrame>>20)

// Reply statuses.
const (
	replyOK   byte = iota + 1 // value (and found, for StepResult)
	replyErr                  // message: thrown into the program
	replyStop                 // message: the host stopped the program
)

// request is one host request (msgCall … msgCheck) in the one shape every
// kind shares: the worker encodes a Host method's arguments into it, the
// parent decodes it and calls that method (procRun.ask).
type request struct {
	seq    int    // the call's, step's or service's seq (0 for msgCheck)
	name   string // a call's connector; a step's or a service's name
	method string // a call's method
	data   []byte // a call's or service's arguments, a step's value, the static calls (JSON)
	errMsg string // a step's failure
}

func (q request) encode(e *enc) *enc {
	return e.uvarint(uint64(q.seq)).str(q.name).str(q.method).bytes(q.data).str(q.errMsg)
}

func decodeRequest(d *dec) request {
	return request{seq: d.int(maxSeq), name: d.str(), method: d.str(), data: d.bytes(), errMsg: d.str()}
}

// reply is the answer to one host request (msgReply).
type reply struct {
	status byte
	found  bool
	value  []byte // the value; for replyErr, the error's details (CallError)
	msg    string // the error's message
}

// encode writes r into e (made by the caller, so that it can stay on
// the stack).
func (r reply) encode(e *enc) *enc {
	return e.uvarint(uint64(r.status)).flag(r.found).bytes(r.value).str(r.msg)
}

func decodeReply(d *dec) reply {
	return reply{status: byte(d.int(int(replyStop))), found: d.flag(), value: d.bytes(), msg: d.str()}
}

// replyOf is the reply carrying what a Host method returned.
func replyOf(found bool, value []byte, err error) reply {
	switch {
	case err == nil:
		return reply{status: replyOK, found: found, value: value}
	case errors.Is(err, sandbox.ErrStop):
		return reply{status: replyStop, msg: err.Error()}
	}
	r := reply{status: replyErr, msg: err.Error()}
	if ce := (*sandbox.CallError)(nil); errors.As(err, &ce) {
		r.value = ce.Details
	}
	return r
}

// err is the error a reply carries, as the Host method returned it: a
// stop, a CallError, another error, or nil.
func (r reply) err() error {
	switch {
	case r.status == replyOK:
		return nil
	case r.status == replyStop:
		return &stopError{msg: r.msg}
	case r.status == replyErr && len(r.value) > 0:
		return &sandbox.CallError{Message: r.msg, Details: r.value}
	}
	return errors.New(r.msg)
}

// frameWriter writes whole frames; it is safe for concurrent use.
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// write sends one frame made of kind, id and the payload in e. The
// payload is written with its header in one Write.
func (fw *frameWriter) write(kind byte, id uint32, e *enc) error {
	b := e.b
	n := len(b) - 4
	if n > maxFrame {
		return errFrameTooLarge
	}
	binary.BigEndian.PutUint32(b[0:4], uint32(n))
	b[4] = kind
	binary.BigEndian.PutUint32(b[5:9], id)
	fw.mu.Lock()
	defer fw.mu.Unlock()
	_, err := fw.w.Write(b)
	return err
}

// frameReader reads frames; it is used by one goroutine at a time.
type frameReader struct {
	r   *bufio.Reader
	hdr [frameHeader]byte
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// read returns the next frame. The payload is freshly allocated: it may be
// kept.
func (fr *frameReader) read() (kind byte, id uint32, payload []byte, err error) {
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		return 0, 0, nil, err
	}
	n := binary.BigEndian.Uint32(fr.hdr[0:4])
	if n < frameHeader-4 || n > maxFrame {
		return 0, 0, nil, fmt.Errorf("sandbox: bad frame length %d", n)
	}
	payload = make([]byte, n-(frameHeader-4))
	if _, err := io.ReadFull(fr.r, payload); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, 0, nil, err
	}
	return fr.hdr[4], binary.BigEndian.Uint32(fr.hdr[5:9]), payload, nil
}

// enc builds a frame: its header is reserved at the start. Small
// numbers, bytes and flags are uvarints (one byte below 128).
type enc struct{ b []byte }

func newEnc(size int) *enc { return &enc{b: make([]byte, frameHeader, frameHeader+size)} }

func (e *enc) uvarint(v uint64) *enc { e.b = binary.AppendUvarint(e.b, v); return e }
func (e *enc) varint(v int64) *enc   { e.b = binary.AppendVarint(e.b, v); return e }

func (e *enc) bytes(v []byte) *enc {
	e.b = append(binary.AppendUvarint(e.b, uint64(len(v))), v...)
	return e
}

func (e *enc) str(v string) *enc {
	e.b = append(binary.AppendUvarint(e.b, uint64(len(v))), v...)
	return e
}

func (e *enc) flag(v bool) *enc {
	if v {
		return e.uvarint(1)
	}
	return e.uvarint(0)
}

// encodeList writes the length of xs, then each item with f.
func encodeList[T any](e *enc, xs []T, f func(*enc, T)) {
	e.uvarint(uint64(len(xs)))
	for _, x := range xs {
		f(e, x)
	}
}

// errShortPayload is a payload that ends too soon or has a bad length.
var errShortPayload = errors.New("sandbox: malformed message")

// dec reads a payload; the first failure sticks in err and later reads
// return zero values.
type dec struct {
	b   []byte
	err error
}

// next reads one value with read, which returns it and its size (<= 0:
// malformed).
func next[T any](d *dec, read func([]byte) (T, int)) (v T) {
	if d.err != nil {
		return v
	}
	v, n := read(d.b)
	if n <= 0 {
		d.err, d.b = errShortPayload, nil
		return v // read's zero value
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) uvarint() uint64 { return next(d, binary.Uvarint) }
func (d *dec) varint() int64   { return next(d, binary.Varint) }
func (d *dec) flag() bool      { return d.uvarint() == 1 }

// int reads a non-negative int that must fit in max.
func (d *dec) int(max int) int {
	return next(d, func(b []byte) (int, int) {
		v, n := binary.Uvarint(b)
		if v > uint64(max) {
			return 0, 0
		}
		return int(v), n
	})
}

// bytes returns a sub-slice of the payload (nil for an empty string).
func (d *dec) bytes() []byte {
	return next(d, func(b []byte) ([]byte, int) {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return nil, 0
		}
		if l == 0 {
			return nil, n
		}
		return b[n : n+int(l) : n+int(l)], n + int(l)
	})
}

func (d *dec) str() string { return string(d.bytes()) }

// decodeList reads what encodeList wrote (each item takes a byte at
// least, which bounds the length).
func decodeList[T any](d *dec, f func(*dec) T) []T {
	var xs []T
	for n := d.int(len(d.b)); n > 0 && d.err == nil; n-- {
		xs = append(xs, f(d))
	}
	return xs
}

// Program encoding.

func encodeProgram(e *enc, p sandbox.Program) {
	e.str(p.Code)
	encodeList(e, p.Globals, func(e *enc, g sandbox.Global) {
		e.str(g.Name)
		encodeList(e, g.Methods, func(e *enc, m string) { e.str(m) })
		e.str(g.Unavailable).flag(g.Forward)
	})
	l := p.Limits
	e.varint(int64(l.Timeout)).varint(int64(l.MaxStackDepth)).varint(int64(l.MaxCalls)).varint(int64(l.MaxLogBytes)).varint(int64(l.MaxCodeBytes)).varint(int64(l.MaxClockReads))
	encodeClock(e, p.Clock)
	encodeList(e, p.Services, func(e *enc, sv sandbox.Service) {
		e.str(sv.Name)
		encodeList(e, sv.Params, func(e *enc, pa sandbox.Param) { e.str(pa.Name).flag(pa.String) })
	})
}

func decodeProgram(d *dec) sandbox.Program {
	var p sandbox.Program
	p.Code = d.str()
	p.Globals = decodeList(d, func(d *dec) sandbox.Global {
		return sandbox.Global{Name: d.str(), Methods: decodeList(d, (*dec).str), Unavailable: d.str(), Forward: d.flag()}
	})
	p.Limits.Timeout = time.Duration(d.varint())
	p.Limits.MaxStackDepth = int(d.varint())
	p.Limits.MaxCalls = int(d.varint())
	p.Limits.MaxLogBytes = int(d.varint())
	p.Limits.MaxCodeBytes = int(d.varint())
	p.Limits.MaxClockReads = int(d.varint())
	p.Clock = decodeClock(d)
	p.Services = decodeList(d, func(d *dec) sandbox.Service {
		return sandbox.Service{Name: d.str(), Params: decodeList(d, func(d *dec) sandbox.Param {
			return sandbox.Param{Name: d.str(), String: d.flag()}
		})}
	})
	return p
}

// encodeClock writes the times as deltas (a busy loop's repeated
// readings take a byte each).
func encodeClock(e *enc, c sandbox.Clock) {
	e.varint(c.Seed).uvarint(uint64(len(c.Times)))
	var last int64
	for _, t := range c.Times {
		e.varint(t - last)
		last = t
	}
}

func decodeClock(d *dec) sandbox.Clock {
	c := sandbox.Clock{Seed: d.varint()}
	n := d.int(len(d.b))
	if n > 0 {
		c.Times = make([]int64, 0, n)
	}
	var last int64
	for i := 0; i < n && d.err == nil; i++ {
		last += d.varint()
		c.Times = append(c.Times, last)
	}
	return c
}

// wireOutcome is an Outcome as the worker reports it.
type wireOutcome struct {
	sandbox.Outcome
	internal string // an internal failure of the worker: Run returns it, clipped to maxInternalText
	recycle  bool   // the worker should not run another program (a memory limit was hit)
}

func encodeOutcome(e *enc, o wireOutcome) {
	e.uvarint(uint64(o.Status)).bytes(o.Result).str(o.Error).str(o.internal).flag(o.recycle)
	encodeList(e, o.Logs, func(e *enc, l string) { e.str(l) })
	encodeClock(e, o.Clock)
}

func decodeOutcome(d *dec) wireOutcome {
	var o wireOutcome
	if o.Status = sandbox.Status(d.int(int(sandbox.Stopped))); o.Status < sandbox.Completed && d.err == nil {
		d.err = errShortPayload
	}
	o.Result, o.Error, o.internal, o.recycle = d.bytes(), d.str(), d.str(), d.flag()
	// Not decodeList: handing d to a function value would move it to the
	// heap, an allocation per run in the parent.
	for n := d.int(len(d.b)); n > 0 && d.err == nil; n-- {
		o.Logs = append(o.Logs, d.str())
	}
	o.Clock = decodeClock(d)
	return o
}
