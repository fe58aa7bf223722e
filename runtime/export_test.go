package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// SetGroupAge sets how long r's passes may keep log writes queued (see
// deferred.go): 0 writes every entry as it is queued, as a runtime did
// before writes were grouped.
func SetGroupAge(r *Runtime, d time.Duration) { r.groupAge = d }

// SetHousekeepingInterval sets the least time between r's housekeepings
// (negative: every Execute does it).
func SetHousekeepingInterval(r *Runtime, d time.Duration) { r.hkEvery = d }

// SetMaxValueBytes sets the cap on each value r's log keeps.
func SetMaxValueBytes(r *Runtime, n int) { r.maxValue = n }

// Search answers codemode.search(query) as a program's call does.
func Search(ctx context.Context, r *Runtime, query string) (json.RawMessage, error) {
	return marshalAnswer(r.catalog().Search(ctx, r.snippets, query))
}

// Describe answers codemode.describe(path) as a program's call does.
func Describe(ctx context.Context, r *Runtime, path string) (json.RawMessage, error) {
	return marshalAnswer(r.catalog().Describe(ctx, r.snippets, path))
}

// RecoverNow runs the recovery a heartbeat runs.
func RecoverNow(ctx context.Context, r *Runtime) { r.recoverOrphans(ctx) }

// Beat renews r's lease as its heartbeat does.
func Beat(ctx context.Context, r *Runtime) { r.own.beat(ctx) }

// OwnerID is the id r claims runs with.
func OwnerID(r *Runtime) string { return r.own.id }

// ResetSearchIndex drops every search segment and index r has made, so
// the next search builds them again: the catalog is built anew from the
// connectors it holds (which list their tools again). Not safe while r
// searches.
func ResetSearchIndex(r *Runtime) {
	var srcs []catalog.Source
	for _, s := range r.catalog().Connectors() {
		srcs = append(srcs, s.Source)
	}
	c, err := catalog.New(context.Background(), srcs, catalog.Options{Codemode: codemodeDeclaration, Scrubber: r.scrub, Logger: r.log})
	if err != nil {
		panic(err)
	}
	r.cat.Store(c)
	r.snippets = catalog.NewSnippets(r.store)
}

// HasPath reports whether path is an available connector's method.
func HasPath(r *Runtime, path string) bool {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return false
	}
	_, err := r.catalog().Resolve(path[:i], path[i+1:])
	return err == nil
}

// Check runs the check before running over calls, as a pass of r would.
func Check(ctx context.Context, r *Runtime, calls []sandbox.StaticCall) ([]sandbox.Problem, error) {
	return newPass(r, &codemode.Execution{ID: "bench"}, nil, 0, 0, nil).Check(ctx, calls)
}

// Tick runs one heartbeat of r: it renews the lease, records what the
// store failed to record, and recovers.
func Tick(ctx context.Context, r *Runtime) { r.own.tick(ctx) }

// MayAct is nil, or why r may no longer act on run id (its claim lapsed).
func MayAct(r *Runtime, id string) error { return r.own.claims.mayAct(id) }

// Execution returns one execution and its whole log, as ExecutionLog
// does with codemode.LogQuery{} (the tests read the entries whole).
func (r *Runtime) Execution(ctx context.Context, id string) (*codemode.Execution, []codemode.Entry, error) {
	e, err := r.seen(ctx, id, ownRun)
	if err != nil {
		return nil, nil, err
	}
	log, err := r.store.Entries(ctx, id)
	if err != nil {
		return nil, nil, fmt.Errorf("load log of %s: %w", id, err)
	}
	return e, log, nil
}

// URL is the page the person opens in their browser to sign in.
func (b *BackgroundSignIn) URL() string { return b.url }

// TaskPoll reads the tasks of run id's waiting calls once, as its waiter
// does at every poll, and returns when to read them again.
func TaskPoll(ctx context.Context, r *Runtime, id string) time.Duration { return r.taskPoll(ctx, id) }

// WaitPoll polls waiting run id once, as its waiter does, and returns
// whether the waiter goes on and when it polls again.
func WaitPoll(ctx context.Context, r *Runtime, id string) (time.Duration, bool) {
	return r.waitPoll(ctx, id)
}
