package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// A server's answer that mcp-go cannot decode, or whose id is not the one
// its request was sent with (a string where a number was sent), is dropped by mcp-go's SSE transport and by an event stream's
// reader, and was by the stdio transport: its request waited for its
// CallTimeout, and a start (initialize, tools/list), which has none, for
// ever. The connector looks at each message before mcp-go does, and one it
// can tell is meant for a request awaiting its answer (misanswered: by its
// id, or, over streamable HTTP, as the answer of a POST) is
// replaced by a JSON-RPC error answering that request (errorAnswer),
// saying what was wrong: the request fails at once, alone.

// An answerBook keeps the requests awaiting their answers on a legacy SSE
// session, whose answers all come on one stream.
type answerBook struct {
	mu      sync.Mutex
	pending map[string]bool // by the id's canonical JSON text (idText)
}

func (b *answerBook) add(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending == nil {
		b.pending = map[string]bool{}
	}
	b.pending[id] = true
}

func (b *answerBook) done(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.pending, id)
}

// fix returns, for msg, a message of the stream, the error answer of the
// request it misanswers, to take its place; nil when it misanswers none.
func (b *answerBook) fix(msg []byte) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	id, why := misanswered(msg, func(id string) bool { return b.pending[id] }, "")
	if why == "" {
		return nil
	}
	return errorAnswer(id, why)
}

// idText is a request id's canonical JSON text: a number as an integer
// when it is one, as mcp-go compares them.
func idText(id mcpgo.RequestId) string {
	b, _ := json.Marshal(id)
	return string(b)
}

// misanswered looks at msg, a message from the server, for an answer that
// would not reach the request awaiting it. It returns the id of the
// request msg answers (canonical, see idText) and, when mcp-go would not
// deliver it, why: msg does not decode as mcp-go decodes an answer, or its
// id is the request's as a string where a number was sent or the reverse,
// or, when sole names the one request any answer can be for (a
// streamable-HTTP POST's), msg is an answer (it has a result or an error)
// without an id. It returns "", "" for a message that is
// no answer (a request, a notification, text or JSON that is not an
// object: a line a stdio server logged on its stdout by mistake) and for
// an answer without an id or to none of the requests awaiting one
// (awaits reports whether an id's request does), which is dropped: it
// cannot be told from a stray one, the late answer of a request given up
// on, or an answer to a notification (id null) that a server should not
// have sent, which must not fail a request that is answered right after.
func misanswered(msg []byte, awaits func(string) bool, sole string) (id, why string) {
	// The fields mcp-go decodes an answer's, raw, then each as it does.
	var m struct{ JSONRPC, ID, Method, Error json.RawMessage }
	if !bytes.HasPrefix(bytes.TrimSpace(msg), []byte("{")) || json.Unmarshal(msg, &m) != nil ||
		len(m.Method) > 0 && string(m.Method) != "null" {
		return "", ""
	}
	var (
		version string
		details *mcpgo.JSONRPCErrorDetails
		rid     mcpgo.RequestId
	)
	err := errors.Join(decodeField(m.JSONRPC, &version), decodeField(m.Error, &details), decodeField(m.ID, &rid))
	if rid.IsNil() {
		if sole == "" || !isAnswer(msg) {
			return "", ""
		}
		if err == nil {
			err = fmt.Errorf("it has no id")
		}
		return sole, "the server's answer is malformed: " + short.Clip(err.Error(), 200)
	}
	id = idText(rid)
	switch {
	case awaits(id) && err == nil:
		return id, ""
	case awaits(id):
		return id, "the server's answer is malformed: " + short.Clip(err.Error(), 200)
	}
	other := ""
	switch v := rid.Value().(type) {
	case string:
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			other = strconv.FormatInt(n, 10)
		}
	case int64:
		other = strconv.Quote(strconv.FormatInt(v, 10))
	}
	if other != "" && awaits(other) {
		return other, fmt.Sprintf("the server answered request %s with id %s", other, shownID(m.ID))
	}
	return "", ""
}

// decodeField decodes a field of a message, if it is there, into v.
func decodeField(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// isAnswer reports whether msg, a JSON object, has a result or an error.
func isAnswer(msg []byte) bool {
	var m struct{ Result, Error json.RawMessage }
	_ = json.Unmarshal(msg, &m)
	return len(m.Result) > 0 || len(m.Error) > 0
}

// shownID is an id as the server wrote it, clipped, and quoted when it
// is not printable ASCII.
func shownID(raw json.RawMessage) string {
	s := short.Clip(string(raw), 64)
	for _, r := range s {
		if r < ' ' || r > '~' {
			return strconv.QuoteToASCII(s)
		}
	}
	return s
}

// errorAnswer is the JSON-RPC error answer of request id (its JSON text)
// saying why.
func errorAnswer(id, why string) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string                    `json:"jsonrpc"`
		ID      json.RawMessage           `json:"id"`
		Error   mcpgo.JSONRPCErrorDetails `json:"error"`
	}{mcpgo.JSONRPC_VERSION, json.RawMessage(id), mcpgo.JSONRPCErrorDetails{Code: errMisanswered, Message: why}})
	return b
}

// errMisanswered is the code of errorAnswer's error: outside the codes
// mcp-go names, so that it reports the message alone.
const errMisanswered = -32099
