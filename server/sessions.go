package server

import (
	"crypto/rand"
	"encoding/json"
	"errors"
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

// counter returns the notification counter of a live session, or nil.
func (s *sessions) counter(id string) *sentCounter {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.live[id]; l != nil {
		return &l.sent
	}
	return nil
}

var errUnknownSession = errors.New("unknown session")

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

// Validate accepts a live id and refreshes it.
func (s *sessions) Validate(id string) (isTerminated bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.live[id]
	if l == nil {
		return false, errUnknownSession
	}
	l.lastUsed = time.Now()
	return false, nil
}

// Terminate forgets an id (DELETE).
func (s *sessions) Terminate(id string) (isNotAllowed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, id)
	return false, nil
}

// check applies the session rules to a request before the transport sees
// it (body is a POST's body). It returns 0, or the status and message to
// answer with. Requests of protocol 2026-07-28 and later, which has no
// sessions, pass.
func (s *sessions) check(r *http.Request, body []byte) (int, string) {
	if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		return 0, ""
	}
	id := r.Header.Get(mcpserver.HeaderKeySessionID)
	if id != "" {
		if _, err := s.Validate(id); err == nil {
			return 0, ""
		}
	}
	if r.Method == http.MethodPost && isInitialize(body) {
		return 0, "" // a new session, whatever the client sent
	}
	if id == "" {
		return http.StatusBadRequest, "Bad Request: Mcp-Session-Id header is required (send initialize first)"
	}
	return http.StatusNotFound, "Not Found: unknown or ended session (initialize again)"
}

// isInitialize reports whether a POST body is an initialize request.
func isInitialize(body []byte) bool {
	var msg struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &msg) == nil && msg.Method == string(mcp.MethodInitialize)
}
