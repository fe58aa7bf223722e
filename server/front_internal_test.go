package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"testing"
)

// onFirstRead closes reading when its reader is first read.
type onFirstRead struct {
	io.Reader
	once    sync.Once
	reading chan struct{}
}

func (r *onFirstRead) Read(p []byte) (int, error) {
	r.once.Do(func() { close(r.reading) })
	return r.Reader.Read(p)
}

// mcp-go's read goroutine, which calls stdioFront.Read, can outlive
// Listen (ServeStdio stops the front then): a request of the front's read
// once the front has stopped gets no goroutine stop did not wait for, and
// no answer.
func TestStdioFrontStartsNothingAfterStop(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler)}
	f := s.newFront(context.Background())
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	ctx, end := context.WithCancelCause(context.Background())
	defer end(nil)
	out := newStdioOut(ctx, end, outW)
	in := &onFirstRead{Reader: inR, reading: make(chan struct{})}
	r := &stdioFront{f: f, in: bufio.NewReader(in), out: out, max: 1 << 20}
	read := make(chan error, 1)
	go func() {
		_, err := r.Read(make([]byte, 4096))
		read <- err
	}()
	<-in.reading // Read is past its check of the front's context
	f.stop()
	if _, err := inW.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{}}` + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := <-read; err == nil {
		t.Error("Read after the front stopped returned no error")
	}
	f.wg.Wait() // whatever Read started after stop
	out.flush()
	_ = outW.Close()
	_ = inW.Close()
	if b, _ := io.ReadAll(outR); len(b) > 0 {
		t.Fatalf("a request read after the front stopped was answered on a goroutine stop did not wait for: %s", b)
	}
}

// The answers waiting on stdio are bounded in bytes as well as in number:
// a client that reads nothing while its answers are large (an outcome can
// weigh MiBs: see maxWaitingBytes) has its session ended once
// maxWaitingBytes wait, long before maxWaitingAnswers of them do.
func TestStdioOutBoundsTheBytesWaiting(t *testing.T) {
	r, w := io.Pipe() // a client that reads nothing
	defer r.Close()
	ctx, end := context.WithCancelCause(context.Background())
	defer end(nil)
	o := newStdioOut(ctx, end, w)
	answer := bytes.Repeat([]byte("x"), 1<<20)
	n := 0
	for ; n < maxWaitingBytes>>20+2 && ctx.Err() == nil; n++ {
		_ = o.send(answer, o.owe())
	}
	if !errors.Is(context.Cause(ctx), errNotReading) {
		t.Fatalf("%d answers of 1 MiB wait unread and the session goes on", n)
	}
	if n != maxWaitingBytes>>20+1 {
		t.Errorf("the session ended at answer %d of 1 MiB, want %d: the first past %d MiB", n, maxWaitingBytes>>20+1, maxWaitingBytes>>20)
	}
}

// A batch, which mcp-go refuses whole (a parse error), is not decoded
// message by message before it: a body of server.max_body (4 MiB) made
// of [{},{},…] would otherwise become 1.4 million rpcRequests, each with
// its params' head, for one POST. It is still one request answered.
func TestABatchIsNotDecoded(t *testing.T) {
	raw := append(append([]byte("["), bytes.Repeat([]byte("{},"), 4<<20/3)...), "{}]"...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b := &rpcBody{raw: raw}
	m := b.message()
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > uint64(len(raw)) {
		t.Errorf("reading a batch of %d bytes allocated %d MiB", len(raw), n>>20)
	}
	if m != nil || !b.answered() || b.frontRequest() != nil {
		t.Errorf("a batch: message %v, answered %v", m, b.answered())
	}
}
