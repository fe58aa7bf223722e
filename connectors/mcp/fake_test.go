package mcp

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// fakeServer is a minimal streamable-HTTP MCP server answering with canned
// raw results, to exercise what mcp-go's own server never sends. It speaks
// the initialize handshake (it rejects server/discover as unknown).
type fakeServer struct {
	srv *http.Server

	mu       sync.Mutex
	pages    map[string]string          // tools/list cursor -> raw result
	page     func(cursor string) string // tools/list's raw result when pages has none
	calls    map[string]string          // tools/call tool name -> raw result
	discover string                     // server/discover's raw result ("": method not found)
	methods  []string                   // the methods it was sent, in order
	headers  []http.Header
	hang     string // a method it never answers (until the connection closes)
	// misanswer: a method's answer is the value instead, with "{id}"
	// standing for the request's id (see scriptedServer's misanswerEnv).
	misanswer map[string]string
	onHang    func() // called when it gets the method it never answers
	// events makes it answer with an event stream (see eventData) instead
	// of JSON.
	events bool
	// sse, when set, makes it a legacy SSE server: a GET opens the event
	// stream, whose endpoint is its URL, and a POST is accepted there,
	// its answer sent on the stream through sse.
	sse chan string
	// dropAfter, over legacy SSE, ends the stream after the answer to
	// that method.
	dropAfter string
	// pings, when set, makes it answer tools/call with an event stream of
	// that many ping requests before the result, and hold every answer
	// posted to it (until the connection closes), each told on answered.
	pings    int
	answered chan struct{}
	// hold, when set, makes the tools/call with pings wait for it to close
	// before its result: mcp-go ends the contexts of the server's requests
	// (so their answers are not posted) once the call's result has come.
	hold chan struct{}
}

func startFake(t *testing.T, pages map[string]string, calls map[string]string) (*fakeServer, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{pages: pages, calls: calls}
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serve)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = f.srv.Close()
		<-done
	})
	return f, "http://" + ln.Addr().String() + "/mcp"
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.headers = append(f.headers, r.Header.Clone())
	sse := f.sse
	f.mu.Unlock()
	if r.Method == http.MethodGet && sse != nil {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: endpoint\ndata: "+r.URL.Path+"\n\n")
		for {
			w.(http.Flusher).Flush()
			select {
			case msg := <-sse:
				if msg == "" { // see dropAfter
					return
				}
				_, _ = io.WriteString(w, "event: message\ndata: "+eventData(msg)+"\n\n")
			case <-r.Context().Done():
				return
			}
		}
	}
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Cursor string `json:"cursor"`
			Name   string `json:"name"`
		} `json:"params"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if len(req.ID) == 0 { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	f.mu.Lock()
	hang := f.hang == req.Method
	pings, answered, hold, onHang, events := f.pings, f.answered, f.hold, f.onHang, f.events
	f.mu.Unlock()
	if req.Method == "" && answered != nil { // an answer to a ping
		answered <- struct{}{}
		<-r.Context().Done()
		return
	}
	if req.Method == "tools/call" && pings > 0 {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range pings {
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"ping-%d\",\"method\":\"ping\"}\n\n", i)
		}
		if hold != nil {
			w.(http.Flusher).Flush()
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[]}}\n\n", req.ID)
		return
	}
	if hang {
		if onHang != nil {
			onHang()
		}
		<-r.Context().Done()
		return
	}
	var result string
	f.mu.Lock()
	f.methods = append(f.methods, req.Method)
	switch req.Method {
	case "server/discover":
		result = f.discover
	case "initialize":
		result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"0.1"},"instructions":"fake instructions"}`
	case "tools/list":
		result = f.pages[req.Params.Cursor]
		if result == "" && f.page != nil {
			result = f.page(req.Params.Cursor)
		}
	case "tools/call":
		result = f.calls[req.Params.Name]
	}
	f.mu.Unlock()
	msg := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + result + `}`
	if result == "" {
		msg = `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32601,"message":"method not found"}}`
	}
	f.mu.Lock()
	if tmpl, ok := f.misanswer[req.Method]; ok {
		msg = strings.ReplaceAll(tmpl, "{id}", string(req.ID))
	}
	f.mu.Unlock()
	switch {
	case sse != nil:
		w.WriteHeader(http.StatusAccepted)
		sse <- msg
		f.mu.Lock()
		drop := f.dropAfter == req.Method
		f.mu.Unlock()
		if drop {
			sse <- ""
		}
	case events:
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: message\ndata: "+eventData(msg)+"\n\n")
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, msg)
	}
}

// eventData is msg as the data of an event: on one line, or, where it has
// a run of 128 brackets, on as many as it has runs (a reader joins them
// with line breaks, which JSON takes for spaces).
func eventData(msg string) string {
	run := strings.Repeat("[", 128)
	return strings.ReplaceAll(msg, run, run+"\ndata: ")
}

func (f *fakeServer) seenHeaders() []http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]http.Header(nil), f.headers...)
}

// newHangingSSEServer accepts SSE streams on ln but never sends the
// endpoint event.
func newHangingSSEServer(ln net.Listener) *http.Server {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})}
	go func() { _ = srv.Serve(ln) }()
	return srv
}

// requireHeader puts a reverse proxy in front of target that refuses any
// request without the header name: value, and returns the proxy's URL with
// target's path.
func requireHeader(t *testing.T, target, name, value string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := fixture.Proxy(t, target)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(name) != value {
			http.Error(w, "missing "+name, http.StatusUnauthorized)
			return
		}
		r.Host = u.Host // the fixture only accepts loopback hosts
		proxy.ServeHTTP(w, r)
	})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return "http://" + ln.Addr().String() + u.Path
}
