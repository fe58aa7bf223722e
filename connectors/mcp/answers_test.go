package mcp

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// misansweredConfig is a server over transport ("stdio", "http", "http
// events", "sse") that answers the methods of misanswer as it says (see
// fakeServer.misanswer), its one tool "flood".
func misansweredConfig(t *testing.T, transport string, misanswer map[string]string) Config {
	if transport == "stdio" {
		env, _ := json.Marshal(misanswer)
		return Config{Name: "mis", Command: os.Args[0], Env: map[string]string{misanswerEnv: string(env)}}
	}
	f, url := startFake(t, map[string]string{"": `{"tools":[{"name":"flood"}]}`}, map[string]string{"flood": `{"content":[]}`})
	f.mu.Lock()
	f.misanswer = misanswer
	f.events = transport == "http events"
	if transport == "sse" {
		f.sse = make(chan string, 16)
	}
	f.mu.Unlock()
	return Config{Name: "mis", URL: url, SSE: transport == "sse"}
}

var misansweredTransports = []string{"stdio", "http", "http events", "sse"}

// TestMisansweredStartFails answers initialize with what mcp-go cannot
// take for its answer: an id of the other type, an error code that is a
// string, no id. mcp-go's SSE transport and an event stream's reader
// dropped such an answer (and so did the stdio transport): the start
// waited for it for ever (Open gave up at StartTimeout; the start went
// on). Now it fails at once, saying what the server sent. A
// streamable-HTTP POST's answer is its request's whatever its id: mcp-go
// takes it, and so does the connector. (Over stdio and SSE, an answer
// without an id, or with one never sent, cannot be told from a stray one,
// and is dropped: see misanswered.)
func TestMisansweredStartFails(t *testing.T) {
	const init = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"mis","version":"1"}}`
	cases := []struct {
		name, answer string
		want         string // in Dial's error; "" for none (it starts)
		wantHTTP     string // the same over streamable HTTP
	}{
		// (initialize is request 2, after server/discover.)
		{"id of the other type", `{"jsonrpc":"2.0","id":"{id}","result":` + init + `}`,
			`the server answered request 2 with id "2"`, ""},
		{"error code a string", `{"jsonrpc":"2.0","id":{id},"error":{"code":"-32000","message":"no"}}`,
			"the server's answer is malformed: error field is neither an object nor a string", "the server's answer is malformed: error field is neither an object nor a string"},
		// (Not dropped: mcp-go fails to decode it, at once.)
		{"result not an object", `{"jsonrpc":"2.0","id":{id},"result":[1]}`,
			"cannot unmarshal array", "cannot unmarshal array"},
		{"id never sent", `{"jsonrpc":"2.0","id":777,"result":` + init + `}`, "-", ""},
		{"no id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
			"-", "the server's answer is malformed: it has no id"},
	}
	for _, tr := range misansweredTransports {
		for _, tc := range cases {
			if tc.want == "-" && !strings.HasPrefix(tr, "http") {
				continue
			}
			t.Run(tr+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				cfg := misansweredConfig(t, tr, map[string]string{"initialize": tc.answer})
				cfg.Logger = testLogger(t)
				// Longer than any test run: the start must end by itself.
				cfg.StartTimeout = time.Hour
				want := tc.want
				if strings.HasPrefix(tr, "http") {
					want = tc.wantHTTP
				}
				c, err := Dial(context.Background(), cfg)
				if err == nil {
					_ = c.Close()
				}
				switch {
				case want == "" && err != nil:
					t.Fatalf("Dial = %v, want it to start", err)
				case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
					t.Fatalf("Dial = %v, want an error saying %q", err, want)
				}
			})
		}
	}
}

// TestMisansweredCallFailsAlone answers a tools/call with an error whose
// code is a string: the call fails at once saying so, and the session
// goes on. It waited for its CallTimeout over SSE and stdio (the answer
// dropped), and over streamable HTTP failed as a transport failure,
// retiring the session.
func TestMisansweredCallFailsAlone(t *testing.T) {
	for _, tr := range misansweredTransports {
		t.Run(tr, func(t *testing.T) {
			t.Parallel()
			cfg := misansweredConfig(t, tr, map[string]string{"tools/call": `{"jsonrpc":"2.0","id":{id},"error":{"code":"-32000","message":"no"}}`})
			cfg.CallTimeout = time.Hour // longer than any test run
			c := dial(t, cfg)
			c.mu.RLock()
			s := c.sess
			c.mu.RUnlock()
			_, err := c.Call(context.Background(), "flood", nil)
			if want := "the server's answer is malformed: error field is neither an object nor a string"; err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("Call = %v, want an error saying %q", err, want)
			}
			c.mu.RLock()
			kept := c.sess == s && s.alive()
			c.mu.RUnlock()
			if !kept {
				t.Errorf("the misanswered call ended the session")
			}
		})
	}
}

// TestSSEStreamLostDuringStart: a legacy SSE server that answers
// initialize and then ends its stream. The stream carries every answer,
// so tools/list's never comes: the start waited for it for ever (Open
// gave up at StartTimeout; the start went on). The session's end ends
// its start too.
func TestSSEStreamLostDuringStart(t *testing.T) {
	f, url := startFake(t, map[string]string{"": `{"tools":[{"name":"flood"}]}`}, nil)
	f.mu.Lock()
	f.sse = make(chan string, 16)
	f.dropAfter = "initialize"
	f.mu.Unlock()
	// Longer than any test run: the start must end by itself.
	_, err := Dial(context.Background(), Config{Name: "lost", URL: url, SSE: true, StartTimeout: time.Hour, Logger: testLogger(t)})
	if want := errConnectionLost.Error(); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Dial = %v, want an error saying %q", err, want)
	}
}
