// Package runtime is the durable execution engine: it owns the execution
// record and its call log, decides for each call whether to replay, execute,
// pause or refuse, and implements approve, reject, rollback, history and
// snippets on top of a Store.
package runtime

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/internal/procid"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/policy"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"go.opentelemetry.io/otel/trace"
)

// Options configure a Runtime.
type Options struct {
	Store    codemode.Store   // persists executions, logs and snippets; required
	Executor sandbox.Executor // runs program passes; required
	Sources  []catalog.Source // the connectors with their configured policy, in order
	Limits   sandbox.Limits   // bound every pass
	// MaxExecutions is how many terminal executions are kept (0: all), and
	// PausedTTL how long a paused run waits before it expires to rejected
	// (0: forever): both in the housekeeping an Execute does before its
	// run begins, at most every housekeepingInterval or MaxExecutions
	// runs (housekeepingDue).
	MaxExecutions int
	PausedTTL     time.Duration
	// MaxRunLogBytes is the quota of one run's log over all its passes
	// (quota.go). 0 means DefaultMaxRunLogBytes; negative, no quota.
	MaxRunLogBytes int64
	// Lease is how long this process's claim on its runs lasts without
	// renewal (renewed every Lease/3): another process that cannot tell
	// whether this one is alive recovers its runs once it lapsed. 0 means
	// DefaultLease; more than MaxLease counts as MaxLease.
	Lease time.Duration
	// Now is the runtime's clock: it stamps what the runtime writes and
	// decides housekeeping and expiry. nil means time.Now; tests move a
	// clock of their own instead of sleeping.
	Now    func() time.Time
	Logger *slog.Logger // diagnostics; nil discards them
	// Scrubber holds the secrets of the configuration and the connectors
	// (nil: none), removed from what connectors answer (before the log
	// keeps it or the program sees it), from tool descriptions and
	// schemas, and from the outcomes and records the runtime writes.
	Scrubber *scrub.Scrubber
	// TaskTimeout bounds each pass of a run started as a task (Start) in
	// place of Limits.Timeout. 0 means DefaultTaskTimeout.
	TaskTimeout time.Duration
	// Policy is who may see and decide what, for requests that carry a
	// principal (a server with an issuer); nil means policy.Policy's zero
	// value. Requests without one are the one user's.
	Policy *policy.Policy
	// AuditRetention, when positive, prunes older audit records in the
	// housekeeping; 0 keeps them all.
	AuditRetention time.Duration
	// TypeCheck, when set, type-checks every new program against
	// Declarations("") before an execution exists: a program with type
	// errors is refused, and nothing is stored.
	TypeCheck TypeChecker
	// Tracer, when set, gets the spans of runs, calls, sandbox passes and
	// log writes (trace.go); nil makes none, at no cost.
	Tracer  trace.TracerProvider
	Metrics Metrics // hears what the runtime measures (metrics.go); nil: nothing
}

// A TypeChecker checks a program's TypeScript against declarations
// (internal/tscheck runs tsgo or tsc). Check returns one line per type
// error, "line L:C: message", with L:C in the program as written; err is
// a failure of the checker itself. It must be safe for concurrent use.
type TypeChecker interface {
	Check(ctx context.Context, code, declarations string) ([]string, error)
}

// Runtime is the durable execution engine. It is safe for concurrent use;
// several Runtimes (processes) may share one Store, agreeing through its
// conditional updates.
type Runtime struct {
	// fixed at creation
	opts     Options            // as given, with Now, Policy and TaskTimeout resolved
	store    codemode.Store     // opts.Store
	maxValue int                // the cap on each value the log keeps (limits.go)
	maxLog   int64              // Options.MaxRunLogBytes resolved; 0: no quota
	groupAge time.Duration      // how long a pass may keep log writes queued (deferred.go)
	scrub    *scrub.Scrubber    // opts.Scrubber (nil scrubs nothing)
	log      *slog.Logger       // opts.Logger, or one that discards
	own      *owner             // this process as the owner of its runs (owner.go)
	journal  codemode.Journaler // the store's journal, if it has one (deferred.go)
	tracer   trace.Tracer       // Options.Tracer's, or nil: no spans (trace.go)
	snippets *catalog.Snippets  // the saved snippets as search and describe see them

	// cat is the current catalog; RefreshConnector replaces it (under
	// refreshMu). A pass keeps the catalog it began with.
	cat       atomic.Pointer[catalog.Catalog]
	refreshMu sync.Mutex

	// background is the context of work the runtime does on its own (the
	// sign-ins StartSignIn waits for); Close ends it.
	background context.Context
	stopBG     context.CancelFunc

	mu      sync.Mutex
	closed  bool                         // guarded by mu
	active  sync.WaitGroup               // in-flight requests and background work; Add under mu while !closed
	signIns map[string]*BackgroundSignIn // StartSignIn's sign-ins under way, by connector; guarded by mu
	live    map[string]*livePass         // passes of task runs in progress here, by run (task.go); guarded by mu
	changed chan struct{}                // closed and replaced when this process changes a run's status (Await); guarded by mu
	waiters map[string]bool              // waiting runs this process watches (waiting.go); guarded by mu
	// The housekeeping's schedule (housekeepingDue): the least time
	// between two (housekeepingInterval; negative: every Execute), when
	// the last began (zero: never), and how many Executes began since;
	// guarded by mu.
	hkEvery time.Duration
	hkLast  time.Time
	hkRuns  int
}

// housekeepingInterval is the least time between two housekeepings
// (housekeepingDue).
const housekeepingInterval = 5 * time.Second

// New lists every source's tools, recovers the runs of processes that are
// gone (owner.go), and returns a Runtime. A source whose Tools fails is
// kept (Connectors reports its Error) without a global. Configuration
// mistakes (duplicate or invalid connector names, malformed approval
// globs) are errors.
func New(ctx context.Context, opts Options) (*Runtime, error) {
	if opts.Store == nil {
		return nil, errors.New("runtime: Options.Store is required")
	}
	if opts.Executor == nil {
		return nil, errors.New("runtime: Options.Executor is required")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cat, err := catalog.New(ctx, opts.Sources, catalog.Options{Codemode: codemodeDeclaration, Scrubber: opts.Scrubber, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Policy = cmp.Or(opts.Policy, defaultPolicy)
	opts.TaskTimeout = positiveOr(opts.TaskTimeout, DefaultTaskTimeout)
	r := &Runtime{
		opts:     opts,
		store:    opts.Store,
		maxValue: maxValueBytes,
		maxLog:   max(cmp.Or(opts.MaxRunLogBytes, DefaultMaxRunLogBytes), 0), // negative: none
		hkEvery:  housekeepingInterval,
		groupAge: groupAge,
		scrub:    opts.Scrubber,
		log:      log,
		snippets: catalog.NewSnippets(opts.Store),
		signIns:  map[string]*BackgroundSignIn{},
		live:     map[string]*livePass{},
		waiters:  map[string]bool{},
	}
	r.background, r.stopBG = context.WithCancel(context.WithoutCancel(ctx))
	lease := min(positiveOr(opts.Lease, DefaultLease), MaxLease)
	r.own = &owner{r: r, id: newID("own_"), self: procid.Self(), lease: lease, claims: newClaims(lease)}
	r.journal, _ = opts.Store.(codemode.Journaler)
	if opts.Tracer != nil {
		r.tracer = opts.Tracer.Tracer(tracerName)
	}
	r.cat.Store(cat)
	r.recoverOrphans(ctx)
	return r, nil
}

// now reads the runtime's clock, in UTC without a monotonic reading (as
// the store keeps it).
func (r *Runtime) now() time.Time { return r.opts.Now().UTC().Round(0) }

// catalog returns the current catalog.
func (r *Runtime) catalog() *catalog.Catalog { return r.cat.Load() }

// positiveOr resolves a duration of Options: d when it is positive, else
// def.
func positiveOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Close refuses new requests, ends the background sign-ins and the passes
// of task runs (they end in error: the server shut down), waits for the
// requests in flight, and removes this process's owner record. The
// store, the executor and the connectors are the caller's to close.
func (r *Runtime) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.stopBG()
	r.active.Wait()
	return r.own.close(context.Background())
}

// begin registers an in-flight request; the returned func ends it.
func (r *Runtime) begin() (func(), error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, codemode.ErrClosed
	}
	r.active.Add(1)
	return r.active.Done, nil
}

// Connectors describes the connectors in source order; tools carry the final
// approval verdict (the connector's own or the configuration's).
func (r *Runtime) Connectors() []codemode.ConnectorInfo { return r.catalog().Infos() }

// newID returns prefix and 16 random hex digits: exec_…, own_….
func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + hex.EncodeToString(b[:])
}

// maxExecutionID bounds the execution ids the runtime looks up, quotes
// and audits (its own are 21 bytes; newID): a request's id may be anything.
const maxExecutionID = 64

// getExecution loads an execution, mapping ErrNotFound to
// ErrUnknownExecution; an id longer than any run has is unknown without
// asking the store.
func (r *Runtime) getExecution(ctx context.Context, id string) (*codemode.Execution, error) {
	if len(id) > maxExecutionID {
		return nil, unknownExecution(id)
	}
	e, err := r.store.GetExecution(ctx, id)
	if errors.Is(err, codemode.ErrNotFound) {
		return nil, unknownExecution(id)
	}
	if err != nil {
		return nil, fmt.Errorf("load execution %s: %w", id, err)
	}
	return e, nil
}

// getWithoutOutput is getExecution without the run's result and console
// output (ExecutionFilter.NoOutput). A run the store cannot read is
// unknown (the list leaves it out, logged).
func (r *Runtime) getWithoutOutput(ctx context.Context, id string) (*codemode.Execution, error) {
	if len(id) > maxExecutionID {
		return nil, unknownExecution(id)
	}
	list, err := r.store.ListExecutions(ctx, codemode.ExecutionFilter{ID: id, NoOutput: true})
	if err != nil {
		return nil, fmt.Errorf("load execution %s: %w", id, err)
	}
	if len(list) == 0 {
		return nil, unknownExecution(id)
	}
	return list[0], nil
}
