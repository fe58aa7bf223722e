package server_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/server"
)

// A stdio client that writes requests without end and reads none of the
// answers cannot make the server hold a goroutine and an answer per
// request: once server.MaxWaitingAnswers answers wait to be written, the
// session ends (ServeStdio returns an error saying why), whether the
// front (tasks/get) or mcp-go (ping) answers them.
func TestStdioEndsASessionWhoseClientReadsNoAnswers(t *testing.T) {
	for name, request := range map[string]string{
		"front":  `{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{}}`, // (refused before the store is read)
		"mcp-go": `{"jsonrpc":"2.0","id":%d,"method":"ping"}`,
	} {
		t.Run(name, func(t *testing.T) { floodStdio(t, request) })
	}
}

// floodStdio writes request (its id a %d) to a stdio server without
// end, reading none of the answers.
func floodStdio(t *testing.T, request string) {
	s := newServer(t, false)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	base := runtime.NumGoroutine()
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(t.Context(), inR, outW) }()
	const requests = 8 * server.MaxWaitingAnswers // more than the pipes and the queue hold
	flooded := make(chan error, 1)
	go func() {
		var b strings.Builder
		for i := range requests {
			fmt.Fprintf(&b, request+"\n", i)
		}
		_, err := inW.WriteString(b.String())
		flooded <- err
	}()
	defer func() {
		outR.Close() // a write waiting on the client fails
		inR.Close()  // so does the rest of the flood
		inW.Close()
		<-flooded
		<-done
		outW.Close()
	}()

	select {
	case err := <-done:
		done <- err
		if err == nil || !strings.Contains(err.Error(), "answers") {
			t.Errorf("ServeStdio: %v; want the session ended for the answers the client does not read", err)
		}
		if n := runtime.NumGoroutine() - base; n > 8 {
			t.Errorf("%d goroutines left once the session ended", n)
		}
	case err := <-flooded:
		flooded <- err
		t.Fatalf("the server read all %d requests of a client that reads no answer (%v), holding %d goroutines", requests, err, runtime.NumGoroutine()-base)
	}
}
