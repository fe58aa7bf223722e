package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
)

const (
	// maxUsers bounds the connections a PerUser connector holds open at
	// once: past it the one idle longest is closed, and when every one is
	// in use the call fails, saying so.
	maxUsers = 64
	// idleTimeout is how long a person's connection stays open without
	// being used.
	idleTimeout = 10 * time.Minute
)

// KindLister is the record kind (oauth.Store) in which a PerUser connector
// keeps whose connection listed its tools last, so that a process started
// later lists them through the same person's grant before anyone calls.
// Its id is the connector's name; its value {"user": SUBJECT} (a subject,
// which the grants' ids name in the clear too; never a token).
const KindLister = "mcp.per_user.lister"

// PerUserConfig configures a PerUser connector.
type PerUserConfig struct {
	// Config is every person's connection's: a url server (streamable
	// HTTP or SSE); its OAuth is left nil, each connection gets Session's.
	Config
	// Session returns the OAuth client that signs in for user (an
	// oauth.Session whose Config.Account is user). The connection it is
	// given to owns it.
	Session func(user string) (*oauth.Session, error)
	// Exchange says that each Session trades its person's own access
	// token for the server's (oauth.GrantTokenExchange): a request whose
	// CallHook carries the person's UserToken is preceded by the exchange
	// when their stored token is missing or due.
	Exchange bool
	// Store keeps KindLister (the store of the grants); nil keeps it in
	// memory only.
	Store oauth.Store
}

// A PerUser connector reaches a remote MCP server with each person's own
// credentials (credentials: per_user): every person has a grant of their
// own (oauth.Config.Account) and a connection of their own, since a
// streamable-HTTP server may bind its session to the token that opened
// it. A call is made on the connection of the person its
// connectors.CallHook names (the run's starter), opened on first use; a
// person without a grant gets connectors.SignInRequired, and signs in for
// themselves (the SignIner's methods act for the person the context's
// CallHook names). Connections are a bounded pool: at most 64, one
// unused for 10 minutes is closed by a goroutine the connector owns
// (Close stops it and closes every connection).
//
// Its tools are listed through the connection used last that lists them,
// else through that of the person who listed them last (KindLister):
// their listing is everyone's (a server that lists other tools to other
// people is called by name all the same; a call of a tool the person's
// own connection does not list fails as unknown). Tools a server runs as
// tasks are called plainly: a task belongs to the connection that started
// it, which a run resumed later may no longer have.
type PerUser struct {
	// fixed at creation
	cfg      PerUserConfig
	log      *slog.Logger
	maxUsers int              // maxUsers; fewer in tests
	now      func() time.Time // the clock idleness is measured by
	stop     chan struct{}    // closed by Close: the sweeper returns
	wg       sync.WaitGroup

	// mu guards what follows. Invariant: conns holds at most maxUsers
	// connections, and one a request holds (busy > 0) is never closed
	// (TestPerUserPoolUnderLoad races it).
	mu     sync.Mutex
	conns  map[string]*userConn // by subject
	lister string               // who listed the tools last, as far as this process knows
	closed bool
}

// userConn is one person's connection.
type userConn struct {
	ready chan struct{} // closed once c or err is set (by whoever opened it)
	c     *Connector
	sess  *oauth.Session // c's
	err   error
	// guarded by PerUser.mu
	busy int       // acquired and not released
	used time.Time // last released (or acquired)
}

// errNoUser is the error of a request to a PerUser connector that names
// nobody.
var errNoUser = errors.New("the request names no person (credentials: per_user needs server.auth, whose people sign in)")

// OpenPerUser returns a PerUser connector for cfg. It opens no connection:
// the first request of each person does.
func OpenPerUser(cfg PerUserConfig) (*PerUser, error) {
	if cfg.URL == "" || cfg.OAuth != nil || cfg.Session == nil {
		return nil, errors.New("credentials: per_user takes a url server and a Session for each person, not one OAuth")
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("mcp connector %q: %w", cfg.Name, err)
	}
	return newPerUser(cfg, maxUsers, time.Now), nil
}

// newPerUser starts a PerUser connector for a valid cfg, holding at most
// limit connections, idle by the clock now.
func newPerUser(cfg PerUserConfig, limit int, now func() time.Time) *PerUser {
	log := cmp.Or(cfg.Logger, slog.Default()).With("connector", cfg.Name)
	p := &PerUser{cfg: cfg, log: log, maxUsers: limit, now: now, stop: make(chan struct{}), conns: map[string]*userConn{}}
	p.wg.Go(p.sweeper)
	return p
}

// Name implements connectors.Connector.
func (p *PerUser) Name() string { return p.cfg.Name }

// sweeper closes idle connections until Close.
func (p *PerUser) sweeper() {
	t := time.NewTicker(idleTimeout / 2)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.sweep()
		}
	}
}

// sweep closes the connections unused for idleTimeout.
func (p *PerUser) sweep() {
	now := p.now()
	var idle []*userConn
	p.mu.Lock()
	for user, uc := range p.conns {
		if uc.busy == 0 && now.Sub(uc.used) >= idleTimeout {
			delete(p.conns, user)
			idle = append(idle, uc)
		}
	}
	p.mu.Unlock()
	for _, uc := range idle {
		uc.close()
	}
}

// close closes a connection no one holds, once it is open.
func (uc *userConn) close() {
	<-uc.ready
	if uc.c != nil {
		_ = uc.c.Close()
	}
}

// acquire returns user's connection, opening it if there is none, held
// until release.
func (p *PerUser) acquire(ctx context.Context, user string) (*userConn, error) {
	if user == "" {
		return nil, fmt.Errorf("mcp connector %q: %w", p.cfg.Name, errNoUser)
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, fmt.Errorf("mcp connector %q: %w", p.cfg.Name, ErrClosed)
	}
	uc := p.conns[user]
	var evicted *userConn
	opening := uc == nil
	if opening {
		if len(p.conns) >= p.maxUsers {
			victim := p.idlestLocked()
			if victim == "" {
				p.mu.Unlock()
				return nil, fmt.Errorf("mcp connector %q: %d people use it at once, its limit; try again shortly", p.cfg.Name, p.maxUsers)
			}
			evicted = p.conns[victim]
			delete(p.conns, victim)
		}
		uc = &userConn{ready: make(chan struct{})}
		p.conns[user] = uc
	}
	uc.busy++
	uc.used = p.now()
	p.mu.Unlock()
	if evicted != nil {
		evicted.close()
	}
	if opening {
		p.open(ctx, user, uc)
	}
	select {
	case <-uc.ready:
	case <-ctx.Done():
		p.release(uc)
		return nil, ctx.Err()
	}
	if uc.err != nil {
		p.release(uc)
		return nil, uc.err
	}
	return uc, nil
}

// open opens user's connection into uc (a connection that cannot be
// made is forgotten, so the next request tries again).
func (p *PerUser) open(ctx context.Context, user string, uc *userConn) {
	var c *Connector
	sess, err := p.cfg.Session(user)
	if err != nil {
		err = fmt.Errorf("mcp connector %q: %w", p.cfg.Name, err)
	} else {
		cfg := p.cfg.Config
		cfg.OAuth, cfg.Logger = sess, p.log.With("user", user)
		c, err = Open(ctx, cfg)
	}
	var late *Connector
	p.mu.Lock()
	if err == nil && p.closed {
		late, c, err = c, nil, fmt.Errorf("mcp connector %q: %w", p.cfg.Name, ErrClosed)
	}
	uc.c, uc.sess, uc.err = c, sess, err
	if err != nil && p.conns[user] == uc {
		delete(p.conns, user)
	}
	p.mu.Unlock()
	close(uc.ready)
	if late != nil {
		_ = late.Close()
	}
}

// release gives back a connection acquire returned.
func (p *PerUser) release(uc *userConn) {
	p.mu.Lock()
	uc.busy--
	uc.used = p.now()
	p.mu.Unlock()
}

// idlestLocked is the person whose connection nobody holds and was used
// longest ago ("" when every one is held).
func (p *PerUser) idlestLocked() string {
	victim := ""
	for user, uc := range p.conns {
		if uc.busy == 0 && (victim == "" || uc.used.Before(p.conns[victim].used)) {
			victim = user
		}
	}
	return victim
}

// users returns the people with a connection, used last first.
func (p *PerUser) users() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	users := slices.Collect(maps.Keys(p.conns))
	slices.SortFunc(users, func(a, b string) int {
		return cmp.Or(p.conns[b].used.Compare(p.conns[a].used), cmp.Compare(a, b))
	})
	return users
}

// with runs fn on user's connection.
func (p *PerUser) with(ctx context.Context, user string, fn func(*Connector) error) error {
	uc, err := p.acquire(ctx, user)
	if err != nil {
		return err
	}
	defer p.release(uc)
	return fn(uc.c)
}

// asUser returns what fn returns on the connection of the person ctx's
// CallHook names, after trading their own token for the server's when
// the connector exchanges tokens and the request carries theirs.
func asUser[T any](ctx context.Context, p *PerUser, fn func(*Connector) (T, error)) (T, error) {
	var zero T
	h := connectors.CallHookFrom(ctx)
	uc, err := p.acquire(ctx, h.UserSubject())
	if err != nil {
		return zero, err
	}
	defer p.release(uc)
	if tok := h.UserAccessToken(); p.cfg.Exchange && tok != "" {
		if err := uc.sess.Exchange(ctx, tok); err != nil {
			return zero, err
		}
	}
	return fn(uc.c)
}

// listing runs fn (a listing) on the connection used last for which it
// succeeds, else on that of the person who listed last, and remembers
// whose it succeeded on.
func (p *PerUser) listing(ctx context.Context, fn func(*Connector) error) error {
	users := p.users()
	if user := p.recall(ctx); user != "" && !slices.Contains(users, user) {
		users = append(users, user)
	}
	var last error
	for _, user := range users {
		if last = p.with(ctx, user, fn); last == nil {
			p.remember(ctx, user)
			return nil
		}
	}
	if last != nil && !needsSignIn(last) {
		return last
	}
	return &connectors.SignInRequired{Connector: p.cfg.Name, Reason: "nobody has signed in yet (credentials: per_user: each person signs in for themselves)"}
}

// Tools implements connectors.Connector: the tools as the connection of
// the person used last lists them (see PerUser), none run as tasks.
func (p *PerUser) Tools(ctx context.Context) ([]connectors.Tool, error) {
	var tools []connectors.Tool
	err := p.listing(ctx, func(c *Connector) error {
		var err error
		tools, err = c.Tools(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	for i := range tools {
		tools[i].Task = false
	}
	return tools, nil
}

// Refresh implements connectors.Refresher on the connection that lists
// the tools.
func (p *PerUser) Refresh(ctx context.Context) error {
	return p.listing(ctx, func(c *Connector) error { return c.Refresh(ctx) })
}

// Call implements connectors.Connector on the connection of the person
// the call's CallHook names.
func (p *PerUser) Call(ctx context.Context, tool string, args json.RawMessage) (connectors.Result, error) {
	return asUser(ctx, p, func(c *Connector) (connectors.Result, error) { return c.Call(ctx, tool, args) })
}

// Capabilities: per user, a sign-in for each person, tools listed again
// on demand; no tasks (see PerUser).
func (p *PerUser) Capabilities() connectors.Capabilities {
	return connectors.Capabilities{PerUser: true, SignIner: p, Refresher: p}
}

// NeedsSignIn implements connectors.SignIner for the person the
// context's CallHook names.
func (p *PerUser) NeedsSignIn(ctx context.Context) (*connectors.SignInRequired, error) {
	return asUser(ctx, p, func(c *Connector) (*connectors.SignInRequired, error) { return c.NeedsSignIn(ctx) })
}

// BeginSignIn implements connectors.SignIner: the person the context's
// CallHook names signs in, to a grant of their own. Their connection is
// held until the attempt is closed.
func (p *PerUser) BeginSignIn(ctx context.Context) (connectors.SignInAttempt, error) {
	user := connectors.CallHookFrom(ctx).UserSubject()
	uc, err := p.acquire(ctx, user)
	if err != nil {
		return nil, err
	}
	a, err := uc.c.BeginSignIn(ctx)
	if err != nil {
		p.release(uc)
		return nil, err
	}
	return &perUserAttempt{SignInAttempt: a, p: p, uc: uc, user: user}, nil
}

// SignOut implements connectors.SignIner: it forgets (and revokes) the
// grant of the person the context's CallHook names, and no one else's.
func (p *PerUser) SignOut(ctx context.Context) error {
	return p.with(ctx, connectors.CallHookFrom(ctx).UserSubject(), func(c *Connector) error { return c.SignOut(ctx) })
}

// perUserAttempt is one person's sign-in.
type perUserAttempt struct {
	connectors.SignInAttempt
	p    *PerUser
	uc   *userConn
	user string
	once sync.Once
}

// Wait waits for the sign-in; once it completed, this person lists the
// tools.
func (a *perUserAttempt) Wait(ctx context.Context) error {
	if err := a.SignInAttempt.Wait(ctx); err != nil {
		return err
	}
	a.p.remember(ctx, a.user)
	return nil
}

// Close ends the attempt and gives the connection back.
func (a *perUserAttempt) Close() error {
	err := a.SignInAttempt.Close()
	a.once.Do(func() { a.p.release(a.uc) })
	return err
}

// lister is KindLister's value.
type lister struct {
	User string `json:"user"`
}

// remember makes user the one whose connection lists the tools, in this
// process and in the store.
func (p *PerUser) remember(ctx context.Context, user string) {
	p.mu.Lock()
	same := p.lister == user
	p.lister = user
	p.mu.Unlock()
	if same || p.cfg.Store == nil {
		return
	}
	old, err := oauth.Load(ctx, p.cfg.Store, KindLister, p.cfg.Name)
	if err == nil {
		next, _ := json.Marshal(lister{User: user})
		_, err = p.cfg.Store.ReplaceRecord(ctx, KindLister, p.cfg.Name, old, next)
	}
	if err != nil {
		p.log.Warn("could not keep whose connection lists the tools", "err", err)
	}
}

// recall returns who listed the tools last: this process's, else the
// store's.
func (p *PerUser) recall(ctx context.Context) string {
	p.mu.Lock()
	user := p.lister
	p.mu.Unlock()
	if user != "" || p.cfg.Store == nil {
		return user
	}
	var l lister
	rec, err := p.cfg.Store.GetRecord(ctx, KindLister, p.cfg.Name)
	if err != nil || json.Unmarshal(rec.Value, &l) != nil {
		return ""
	}
	return l.User
}

// Close implements connectors.Connector: it stops the sweeper and closes
// every connection (waiting for those being opened).
func (p *PerUser) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	conns := p.conns
	p.conns = map[string]*userConn{}
	p.mu.Unlock()
	close(p.stop)
	p.wg.Wait()
	for _, uc := range conns {
		uc.close()
	}
	return nil
}
