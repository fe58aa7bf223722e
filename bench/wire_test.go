package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// A wireClient is the least a client can do for a tools/call over stdio:
// write the request line mcp-go's client writes (protocol 2026-07-28, with
// its _meta) and read the answer line, on one goroutine, decoding nothing.
// It is the floor of BenchmarkDownstreamCall (via=wire), not a target.
type wireClient struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

// wireSumRequest is get-sum(1, 2) as mcp-go's client sends it, %d the id.
const wireSumRequest = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"codemode-bench","version":"1.0.0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"arguments":{"a":1,"b":2},"name":"get-sum"}}` + "\n"

// startWire starts the fixture server at command for a wireClient; a
// cleanup stops it.
func startWire(b *testing.B, command string) *wireClient {
	b.Helper()
	cmd := exec.Command(command)
	in, out := startPiped(b, cmd)
	return &wireClient{cmd: cmd, in: in, out: out}
}

// startPiped starts cmd with pipes to its stdin and from its stdout; a
// cleanup closes its stdin and waits for it.
func startPiped(b *testing.B, cmd *exec.Cmd) (io.WriteCloser, *bufio.Reader) {
	b.Helper()
	cmd.WaitDelay = 2 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("start %s: %v", cmd.Path, err)
	}
	b.Cleanup(func() {
		_ = in.Close()
		if err := cmd.Wait(); err != nil {
			b.Logf("%s: %v", cmd.Path, err)
		}
	})
	return in, bufio.NewReader(out)
}

// sum calls get-sum(1, 2) and checks that the answer carries 3.
func (w *wireClient) sum(context.Context) error {
	w.id++
	if _, err := fmt.Fprintf(w.in, wireSumRequest, w.id); err != nil {
		return err
	}
	line, err := w.out.ReadBytes('\n')
	if err != nil {
		return err
	}
	if !bytes.Contains(line, []byte(`"id":`+strconv.Itoa(w.id)+`,`)) || !bytes.Contains(line, []byte(`"text":"3"`)) {
		return fmt.Errorf("get-sum(1, 2) answered %s", line)
	}
	return nil
}
