package oauth

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth/oauthtest"
	"github.com/codemode-mcp/codemode-mcp/internal/pgtest"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/store/postgres"
	"github.com/codemode-mcp/codemode-mcp/store/sqlite"
)

// env is what a test's sessions share: a real SQLite store (a handle per
// "process"), the sealing key, a scrubber and a log.
type env struct {
	t     *testing.T
	path  string // the SQLite file
	pg    string // a PostgreSQL URL, used instead when set
	seal  *Sealer
	scrub *scrub.Scrubber
	clock *fixture.Clock
	logs  *fixture.SyncBuffer
	log   *slog.Logger
}

func newEnv(t *testing.T) *env {
	seal, err := NewSealer(bytes.Repeat([]byte{7}, KeySize))
	if err != nil {
		t.Fatal(err)
	}
	logs := &fixture.SyncBuffer{}
	return &env{t: t, path: filepath.Join(t.TempDir(), "codemode.db"), seal: seal, scrub: scrub.New(),
		clock: fixture.NewClock(), logs: logs, log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
}

// store opens a new handle on the env's database, as another process
// would: the SQLite file, or with pg set the PostgreSQL database.
func (e *env) store() connectors.Records {
	e.t.Helper()
	if e.pg != "" {
		st, err := postgres.Open(context.Background(), e.pg, postgres.Options{Logger: e.log})
		if err != nil {
			e.t.Fatal(err)
		}
		e.t.Cleanup(func() { st.Close() })
		return st
	}
	st, err := sqlite.Open(context.Background(), e.path, sqlite.Options{Logger: e.log})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { st.Close() })
	return st
}

// onPostgres makes the env's store a new PostgreSQL database (a
// throwaway cluster: internal/pgtest), as replicas share.
func (e *env) onPostgres() { e.pg = pgtest.NewDatabase(e.t) }

// session starts a session on a store handle of its own (unless cfg has
// a Store), with cfg's Server, Sealer, Scrubber (unless set), Logger and
// Now filled in.
func (e *env) session(f *oauthtest.Server, cfg Config) *Session {
	e.t.Helper()
	if cfg.Server == "" {
		cfg.Server = f.ServerURL()
	}
	if cfg.Connector == "" {
		cfg.Connector = "remote"
	}
	if cfg.Store == nil {
		cfg.Store = e.store()
	}
	cfg.Sealer, cfg.Logger, cfg.Now = e.seal, e.log, e.clock.Now
	cfg.Scrubber = cmp.Or(cfg.Scrubber, e.scrub)
	s, err := New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { s.Close() })
	return s
}

// call sends a request to the fake's protected resource through the
// session's transport and returns the status (0 with the error when the
// transport failed).
func call(t *testing.T, s *Session, f *oauthtest.Server) (int, error) {
	t.Helper()
	c := &http.Client{Transport: s.Transport(http.DefaultTransport)}
	resp, err := c.Post(f.ServerURL(), "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && !strings.Contains(string(body), "tools/list") {
		t.Errorf("the body was not sent again whole: %s", body)
	}
	return resp.StatusCode, nil
}

// signIn runs a whole sign-in: BeginSignIn, a "browser" that follows the
// authorization URL's redirects to the loopback listener, and Wait. It
// returns the page the browser ended on.
func signIn(t *testing.T, s *Session) (string, error) {
	t.Helper()
	a, err := s.BeginSignIn(context.Background())
	if err != nil {
		return "", err
	}
	defer a.Close()
	page := browse(t, a.URL())
	return page, a.Wait(context.Background())
}

// browse GETs u following redirects, as a browser that approves at once
// does, and returns the final page.
func browse(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func sortedScopes(s string) []string {
	out := strings.Fields(s)
	slices.Sort(out)
	return out
}

// replaceFunc is a Store whose ReplaceRecord is replace's.
type replaceFunc struct {
	Store
	replace func(ctx context.Context, kind, id string, old, new json.RawMessage) (bool, error)
}

func (r replaceFunc) ReplaceRecord(ctx context.Context, kind, id string, old, new json.RawMessage) (bool, error) {
	return r.replace(ctx, kind, id, old, new)
}
