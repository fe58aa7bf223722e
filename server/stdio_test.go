package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
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
		t.Run(name, func(t *testing.T) { floodStdio(t, request, false) })
	}
}

// A stdio client that reads everything but writes requests answered only
// when the session ends (subscriptions/listen of 2026-07-28, which mcp-go
// holds open until then) cannot make the server hold a goroutine per
// request either: every request is counted from when it is read, and past
// server.MaxWaitingAnswers the session ends.
func TestStdioEndsASessionWhoseRequestsAreNeverAnswered(t *testing.T) {
	floodStdio(t, `{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true}}}`, true)
}

// floodStdio writes request (its id a %d) to a stdio server without
// end, reading all the answers or none of them.
func floodStdio(t *testing.T, request string, reads bool) {
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
	if reads {
		go func() { _, _ = io.Copy(io.Discard, outR) }() // (until outR is closed)
	}
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
		// The session's goroutines (mcp-go's among them) wind down once it
		// has ended, not all before ServeStdio returns.
		fixture.Until(t, "the session's goroutines to end", func() bool { return runtime.NumGoroutine()-base <= 9 })
	case err := <-flooded:
		flooded <- err
		read := "none"
		if reads {
			read = "all"
		}
		t.Fatalf("the server read all %d requests of a client that reads %s of the answers (%v), holding %d goroutines", requests, read, err, runtime.NumGoroutine()-base)
	}
}

// A legacy SSE client that POSTs requests and reads none of its event
// stream cannot make the server hold a goroutine and an answer per
// request (mcp-go answers each POST 202 at once and queues the answer on
// the stream): once server.MaxWaitingAnswers answers wait on the stream,
// further requests are refused with 429 until the client reads.
func TestSSERefusesRequestsWhileTheStreamIsNotRead(t *testing.T) {
	s := newServerWith(t, server.Options{HTTP: config.HTTP{WriteTimeout: time.Hour}}) // (the stream is not dropped meanwhile)
	stream, post := openSSE(t, serve(t, s, server.TransportSSE))
	post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	g0 := runtime.NumGoroutine()
	const requests = 3 * server.MaxWaitingAnswers
	for i := range requests {
		switch status := post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i+1)); status {
		case http.StatusAccepted:
		case http.StatusTooManyRequests:
			if i < server.MaxWaitingAnswers {
				t.Errorf("request %d refused; want %d to wait", i, server.MaxWaitingAnswers)
			}
			if n := runtime.NumGoroutine() - g0; n > server.MaxWaitingAnswers+64 {
				t.Errorf("%d goroutines for %d answers waiting", n, server.MaxWaitingAnswers)
			}
			// Once the client reads its answers (initialize's and i),
			// its requests are taken again.
			for answers := 0; answers < i+1; {
				line, err := stream.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasPrefix(line, "data: ") && !strings.Contains(line, `"method":`) {
					answers++
				}
			}
			if status := post(`{"jsonrpc":"2.0","id":"after","method":"ping"}`); status != http.StatusAccepted {
				t.Errorf("a request once the answers are read: status %d", status)
			}
			return
		default:
			t.Fatalf("request %d: status %d", i, status)
		}
	}
	t.Fatalf("all %d requests accepted on a stream nobody reads, holding %d goroutines", requests, runtime.NumGoroutine()-g0)
}

// openSSE opens a legacy SSE event stream of the server at base, which
// the test reads, and returns it with a func that POSTs a message to its
// session and returns the status; the stream is closed when the test ends.
func openSSE(t *testing.T, base string) (*bufio.Reader, func(body string) int) {
	t.Helper()
	addr := strings.TrimPrefix(base, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n", server.PathSSE, addr) // (its end is the connection's)
	stream := bufio.NewReader(conn)
	var endpoint string
	for endpoint == "" {
		line, err := stream.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := strings.CutPrefix(line, "data: "); ok {
			endpoint = strings.TrimSpace(p)
		}
	}
	c := &http.Client{}
	t.Cleanup(c.CloseIdleConnections)
	return stream, func(body string) int {
		t.Helper()
		r, err := c.Post(base+endpoint, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		return r.StatusCode
	}
}

// mcp-go's legacy SSE transport serves a request on a goroutine whose
// context never ends, not even with its session, and subscriptions/listen
// (2026-07-28) waits for that context to end: each would hold a goroutine
// for the life of the process. The guard refuses it there (400), before
// mcp-go sees it; the session goes on.
func TestSSERefusesSubscriptionsListen(t *testing.T) {
	_, post := openSSE(t, serve(t, newServer(t, false), server.TransportSSE))
	listen := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true}}}`
	if status := post(listen); status != http.StatusBadRequest {
		t.Errorf("subscriptions/listen on the legacy SSE transport: status %d, want 400", status)
	}
	if status := post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); status != http.StatusAccepted {
		t.Errorf("a ping after: status %d, want 202", status)
	}
}

// More codemode calls awaiting approval on one stdio session than mcp-go's
// stdio server has tool-call workers and queue (5 + 100) are all asked,
// and the answers approving them are read: none runs in the read loop,
// where waiting for its approval would stop the reading of every answer.
// The client answers no question until six are asked (one more than
// mcp-go's workers).
func TestStdioManyCallsAwaitingApprovalAreAllAnswered(t *testing.T) {
	const calls = 110
	var asked atomic.Int64
	six := make(chan struct{})
	approve := func(ctx context.Context, _ mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		if asked.Add(1) == 6 {
			close(six)
		}
		select {
		case <-six:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept}}, nil
	}
	s := newServerTimeout(t, server.Options{Elicitation: true}, 0, 10*time.Minute) // (110 programs at once on a loaded machine)
	c := stdioClient(t, s, mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}, client.WithElicitationHandler(elicitFunc(approve)))
	errs := make(chan error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "codemode",
				Arguments: map[string]any{"code": fmt.Sprintf(`(await notes.createNote({ text: "n%d" })).text`, i)}}}
			res, err := c.CallTool(context.Background(), req)
			switch {
			case err != nil:
				errs <- fmt.Errorf("call %d: %w", i, err)
			case res.IsError:
				errs <- fmt.Errorf("call %d failed: %+v", i, res.Content)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := asked.Load(); n != calls {
		t.Errorf("%d approvals asked, want %d", n, calls)
	}
}

// A legacy SSE client that POSTs requests with large answers and reads
// none of its event stream cannot make the server hold more than
// server.MaxWaitingBytes of them (about 2 MB each here: a result of a
// megabyte, shown twice), as stdio's cannot: its session ends, and its
// stream with it, before it could read them all.
func TestSSEEndsASessionHoldingTooManyAnswerBytes(t *testing.T) {
	// (the stream is not dropped meanwhile; 48 runs at once, under load, pass in time)
	s := newServerTimeout(t, server.Options{HTTP: config.HTTP{WriteTimeout: time.Hour}}, 0, time.Minute)
	stream, post := openSSE(t, serve(t, s, server.TransportSSE))
	post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	const answer, calls = 2 << 20, 3 * server.MaxWaitingBytes / (2 << 20) / 2 // 1.5 times the bound
	for i := range calls {
		if status := post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"codemode","arguments":{"code":"async () => \"r\".repeat(%d)"}}}`, i+1, answer/2)); status != http.StatusAccepted {
			t.Fatalf("call %d: status %d", i, status)
		}
	}
	// The session ends once the answers made and unread weigh more than
	// the bound: its POSTs are refused from then on (pings are answered
	// at once; past MaxWaitingAnswers of them, 429).
	for i := 0; ; i++ {
		status := post(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
		if status != http.StatusAccepted && status != http.StatusTooManyRequests {
			break
		}
		if i == 20*server.MaxWaitingAnswers {
			break // (the session goes on: see below)
		}
	}
	var held, answers int
	for answers < calls {
		line, err := stream.ReadString('\n')
		if err != nil {
			break // the stream ended
		}
		held += len(line)
		if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"result":{"content"`) {
			if answers++; len(line) < answer/2 {
				t.Fatalf("answer %d of %d bytes, want a megabyte result: %.300s", answers, len(line), line)
			}
		}
	}
	t.Logf("%d answers (%d MB of the stream) read", answers, held>>20)
	if answers == calls || held > server.MaxWaitingBytes+8*answer {
		t.Errorf("the server held %d answers (%d MB) for a client reading none of them; want its session ended past %d MB", answers, held>>20, server.MaxWaitingBytes>>20)
	}
}
