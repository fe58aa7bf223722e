package server

import (
	"crypto/rand"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// maxSessions bounds the streamable-HTTP sessions remembered at once; past
// it, the least recently used is forgotten (its client gets 404 and, as
// the specification asks of clients, initializes again).
const maxSessions = 4096

// sessions issues and tracks streamable-HTTP session ids (the transport's
// SessionIdManager): an id is live from the initialize that issued it until
// its client deletes it or it is evicted. Safe for concurrent use.
type sessions struct {
	mu   sync.Mutex
	live map[string]*liveSession // guarded by mu
}

// liveSession is what the server keeps of one session.
type liveSession struct {
	lastUsed time.Time // guarded by sessions.mu
	// sent counts the notifications written on the session's responses,
	// its POSTs' and its GET stream's (see sentCounter).
	sent sentCounter
}

func newSessions() *sessions {
	return &sessions{live: map[string]*liveSession{}}
}

// Generate issues a new id: 128 random bits (rand.Text).
func (s *sessions) Generate() string {
	id := "mcp-session-" + rand.Text()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.live) >= maxSessions { // the least recently used goes
		delete(s.live, slices.MinFunc(slices.Collect(maps.Keys(s.live)), func(a, b string) int { return s.live[a].lastUsed.Compare(s.live[b].lastUsed) }))
	}
	s.live[id] = &liveSession{lastUsed: time.Now()}
	return id
}

// Validate accepts every id: the transport sees only the requests the
// guard let through with a live one (check), or with none.
func (*sessions) Validate(string) (isTerminated bool, err error) { return false, nil }

// touch refreshes the live session id and returns it, or nil.
func (s *sessions) touch(id string) *liveSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.live[id]
	if l != nil {
		l.lastUsed = time.Now()
	}
	return l
}

// Terminate forgets an id (DELETE).
func (s *sessions) Terminate(id string) (isNotAllowed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, id)
	return false, nil
}

// check applies the session rules to a request before the transport sees
// it (body: a POST's; nil for another method). It returns the notification counter of the
// request's session (a counter of its own for a request without one:
// initialize, or protocol 2026-07-28 and later, which has no sessions and
// passes), or the status and message to answer with.
func (s *sessions) check(r *http.Request, body *rpcBody) (*sentCounter, int, string) {
	if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		return &sentCounter{}, 0, ""
	}
	id := r.Header.Get(mcpserver.HeaderKeySessionID)
	if l := s.touch(id); l != nil {
		return &l.sent, 0, ""
	}
	if _, m := body.messages(); m != nil && m.Method == mcp.MethodInitialize {
		return &sentCounter{}, 0, "" // a new session, whatever the client sent
	}
	if id == "" {
		return nil, http.StatusBadRequest, "Bad Request: Mcp-Session-Id header is required (send initialize first)"
	}
	return nil, http.StatusNotFound, "Not Found: unknown or ended session (initialize again)"
}
