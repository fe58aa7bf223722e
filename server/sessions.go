package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/evict"
)

// maxSessions bounds the streamable-HTTP sessions remembered at once; past
// it, the least recently used is forgotten (its client gets 404 and, as
// the specification asks of clients, initializes again).
const maxSessions = 4096

// maxPersonSessions bounds the sessions of one person under an issuer;
// past it, that person's least recently used is forgotten: one person's
// token opening sessions in a loop ends only their own, never the
// sessions of everyone else (which maxSessions alone would let it push
// out). Without an issuer there is one principal, and only maxSessions.
const maxPersonSessions = 64

// sessions issues and tracks streamable-HTTP session ids (the transport's
// SessionIdManagerResolver): an id is live from the initialize that issued
// it until its client deletes it or it is evicted. Under an issuer an id
// is bound to the person whose access token opened it: another person's
// request that names it finds no session (404), as the specification's
// security practices ask (an id that leaked is no one else's way into the
// session, its streams or its elicitations). Safe for concurrent use.
type sessions struct {
	// end ends in the transport a session this forgot unasked (evicted),
	// as its client's DELETE would: mcp-go keeps a session until then.
	// Set before the transport serves; nil: nothing to end.
	end func(id string)

	mu   sync.Mutex
	live map[string]*liveSession // guarded by mu
}

// liveSession is what the server keeps of one session.
type liveSession struct {
	subject  string    // whose it is: the Principal's subject ("" for none); fixed
	lastUsed time.Time // guarded by sessions.mu
	// sent counts the notifications written on the session's responses,
	// its POSTs' and its GET stream's (see sentCounter).
	sent sentCounter
}

func newSessions() *sessions {
	return &sessions{live: map[string]*liveSession{}}
}

// subjectOf is whose a request is: its context's Principal's subject, ""
// for none (no issuer: one principal per server).
func subjectOf(ctx context.Context) string {
	if p := codemode.PrincipalFrom(ctx); p != nil {
		return p.Subject
	}
	return ""
}

// ResolveSessionIdManager is the manager of r's session ids: the ids it
// issues are bound to r's person. Without a request (mcp-go's sweeper),
// the sessions themselves, whose ids are nobody's.
func (s *sessions) ResolveSessionIdManager(r *http.Request) mcpserver.SessionIdManager {
	if r == nil {
		return s
	}
	return personsSessions{s, subjectOf(r.Context())}
}

// personsSessions issues the session ids of one person.
type personsSessions struct {
	*sessions
	subject string
}

func (p personsSessions) Generate() string { return p.generate(p.subject) }

// Generate issues a new id bound to no one.
func (s *sessions) Generate() string { return s.generate("") }

// generate issues a new id of subject's: 128 random bits (rand.Text).
func (s *sessions) generate(subject string) string {
	id := "mcp-session-" + rand.Text()
	lastUsed := func(l *liveSession) time.Time { return l.lastUsed }
	s.mu.Lock()
	var gone []string
	if subject != "" { // the person's own least recently used goes first
		gone = evict.MakeRoomAmong(s.live, maxPersonSessions, func(l *liveSession) bool { return l.subject == subject }, lastUsed)
	}
	gone = append(gone, evict.MakeRoom(s.live, maxSessions, nil, lastUsed)...) // then anyone's least recently used
	s.live[id] = &liveSession{subject: subject, lastUsed: time.Now()}
	s.mu.Unlock()
	if s.end != nil {
		for _, old := range gone {
			s.end(old) // (unlocked: mcp-go calls Terminate)
		}
	}
	return id
}

// Validate accepts every id: the transport sees only the requests the
// guard let through with a live one (check), or with none.
func (*sessions) Validate(string) (isTerminated bool, err error) { return false, nil }

// touch refreshes the live session id of subject and returns it, or nil.
func (s *sessions) touch(id, subject string) *liveSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.live[id]
	if l == nil || l.subject != subject {
		return nil
	}
	l.lastUsed = time.Now()
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
	if l := s.touch(id, subjectOf(r.Context())); l != nil {
		return &l.sent, 0, ""
	}
	if m := body.message(); m != nil && m.Method == mcp.MethodInitialize {
		return &sentCounter{}, 0, "" // a new session, whatever the client sent
	}
	if id == "" {
		return nil, http.StatusBadRequest, "Bad Request: Mcp-Session-Id header is required (send initialize first)"
	}
	return nil, http.StatusNotFound, "Not Found: unknown or ended session (initialize again)"
}

// sseIDs issues the legacy SSE transport's session ids, bound to the
// person who opened the event stream as streamable HTTP's are: 128 random
// bits and a MAC of them and the person's subject under a key of this
// process, so that the guard tells whose an id is without remembering it
// (mcp-go keeps the SSE sessions, and says nothing when one ends).
type sseIDs struct {
	key [32]byte
	// streams holds the *sseStream of each session whose event stream is
	// open, by id.
	streams sync.Map
}

// sseStream counts the answers waiting on one legacy SSE event stream:
// mcp-go answers a POSTed request 202 at once and queues its answer on the
// stream, holding a goroutine until it is written, so a client that does
// not read its stream would otherwise make the server hold one per
// request. The guard counts a request it lets through (waitsOn) and its
// answer once written (deadlineWriter.answered).
type sseStream struct {
	id      string // set by generate
	waiting atomic.Int64
}

// sseStreamKey is the context key of the sseStream a GET of the event
// stream opens.
type sseStreamKey struct{}

// waitsOn counts a request POSTed to session id, unless maxWaitingAnswers
// already wait on its stream: then it reports false.
func (k *sseIDs) waitsOn(id string) bool {
	v, ok := k.streams.Load(id)
	if !ok {
		return true // no stream: mcp-go refuses it
	}
	st := v.(*sseStream)
	if st.waiting.Add(1) > maxWaitingAnswers {
		st.waiting.Add(-1)
		return false
	}
	return true
}

func newSSEIDs() *sseIDs {
	k := &sseIDs{}
	_, _ = rand.Read(k.key[:]) // never fails (crypto/rand)
	return k
}

// generate is mcp-go's SessionIDGenFunc.
func (k *sseIDs) generate(_ context.Context, r *http.Request) (string, error) {
	n := rand.Text()
	id := n + "." + k.mac(n, subjectOf(r.Context()))
	if st, ok := r.Context().Value(sseStreamKey{}).(*sseStream); ok {
		st.id = id
		k.streams.Store(id, st)
	}
	return id, nil
}

// owns reports whether id is one generate issued to r's person.
func (k *sseIDs) owns(id string, r *http.Request) bool {
	n, m, ok := strings.Cut(id, ".")
	return ok && hmac.Equal([]byte(m), []byte(k.mac(n, subjectOf(r.Context()))))
}

func (k *sseIDs) mac(n, subject string) string {
	h := hmac.New(sha256.New, k.key[:])
	h.Write([]byte(n))
	h.Write([]byte{0})
	h.Write([]byte(subject))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16])
}
