package runtime_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/connectors/mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors/notes"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/policy"
	"github.com/codemode-mcp/codemode-mcp/runtime"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/pass"
	"github.com/codemode-mcp/codemode-mcp/sandbox/worker"
	"github.com/codemode-mcp/codemode-mcp/store/sqlite"
	"go.opentelemetry.io/otel/trace"
)

// setup chooses what an env connects.
type setup struct {
	kv          *kv               // the kv connector to use (a fresh one if nil)
	noKV        bool              // leave kv out
	mcp         bool              // add the fixture MCP server as "fx"
	fxTasks     bool              // the fixture offers tasks and its task-counter tool (-tasks)
	fxApprove   []string          // approval globs for fx
	fxNoApprove []string          // no_approve globs for fx
	fxForward   bool              // fx forwards methods it did not list (forward_unknown)
	fxRevert    map[string]string // revert functions for fx
	notes       bool              // add the built-in notes connector
	kvApprove   []string
	kvRevert    map[string]string
	maxExecs    int
	ttl         time.Duration
	hkEvery     time.Duration // runtime.SetHousekeepingInterval
	limits      sandbox.Limits
	maxValue    int          // runtime.SetMaxValueBytes
	maxLog      int64        // Options.MaxRunLogBytes
	fxLogger    *slog.Logger // the fixture connector's logger (discarded if nil)
	extra       []catalog.Source
	// wrap, if set, wraps the real store the runtime is given (to count
	// or fail its writes); e.store stays the real one.
	wrap func(codemode.Store) codemode.Store
	// groupAge, if set, replaces how long a pass keeps log writes queued
	// (runtime.SetGroupAge); writeThrough writes each as it is queued.
	groupAge     time.Duration
	writeThrough bool
	// clock, if set, is the runtime's clock (Options.Now).
	clock *fixture.Clock
	// scrubber, if set, is Options.Scrubber; fxEnv adds to the fixture's
	// environment.
	scrubber *scrub.Scrubber
	fxEnv    map[string]string
	lease    time.Duration // Options.Lease
	// taskTimeout is Options.TaskTimeout.
	taskTimeout time.Duration
	// typeCheck is Options.TypeCheck.
	typeCheck runtime.TypeChecker
	// policy is Options.Policy; auditRetention Options.AuditRetention.
	policy         *policy.Policy
	auditRetention time.Duration
	// workers, when positive, runs programs in a pool of that many worker
	// processes (this test binary, see TestMain) instead of in process.
	workers int
	// tracer is Options.Tracer.
	tracer trace.TracerProvider
	// logger is Options.Logger (discarded if nil); metrics is
	// Options.Metrics.
	logger  *slog.Logger
	metrics runtime.Metrics
}

// env is a Runtime over a real SQLite file, the real sandbox, and real
// connectors: kv (native, in-process), the fixture MCP server over stdio,
// and notes.
type env struct {
	t       testing.TB
	ctx     context.Context
	dir     string
	dbPath  string
	effects string // the fixture's FIXTURE_SIDE_EFFECTS file

	store *sqlite.Store
	exec  sandbox.Executor
	kv    *kv
	fx    *mcp.Connector
	notes *notes.Notes
	rt    *runtime.Runtime
	down  bool
}

func newEnv(t testing.TB, s setup) *env {
	t.Helper()
	return newEnvAt(t, filepath.Join(t.TempDir(), "codemode.db"), s)
}

// newEnvAt is newEnv on the database at dbPath (another process's, say).
func newEnvAt(t testing.TB, dbPath string, s setup) *env {
	t.Helper()
	dir := filepath.Dir(dbPath)
	e := &env{t: t, ctx: context.Background(), dir: dir, dbPath: dbPath, effects: filepath.Join(dir, "effects.txt")}
	e.open(s)
	t.Cleanup(e.shutdown)
	return e
}

// open starts a store, executor, connectors and runtime on e.dbPath.
func (e *env) open(s setup) {
	t := e.t
	t.Helper()
	ctx := e.ctx
	st, err := sqlite.Open(ctx, e.dbPath, sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	e.store = st
	e.exec = pass.NewInProcess(pass.InProcessOptions{})
	if s.workers > 0 {
		pool, err := worker.NewPool(worker.Options{
			Command: []string{os.Args[0]}, Env: []string{envTestWorker + "=1"},
			Size: s.workers, MaxWorkers: s.workers,
		})
		if err != nil {
			t.Fatalf("start the worker pool: %v", err)
		}
		e.exec = pool
	}
	e.down = false
	var sources []catalog.Source
	if !s.noKV {
		e.kv = s.kv
		if e.kv == nil {
			e.kv = newKV("kv")
		}
		sources = append(sources, catalog.Source{Connector: e.kv, Approve: s.kvApprove, Revert: s.kvRevert})
	}
	if s.mcp {
		var args []string
		if s.fxTasks {
			args = []string{"-tasks"}
		}
		fx, err := mcp.Open(ctx, mcp.Config{
			Name:           "fx",
			Command:        fixture.MCPServer(t),
			Args:           args,
			Env:            fxEnv(e.effects, s.fxEnv),
			Logger:         orDiscard(s.fxLogger),
			ForwardUnknown: s.fxForward,
		})
		if err == nil {
			if _, err = fx.Tools(ctx); err != nil { // the fixture did not start
				fx.Close()
			}
		}
		if err != nil {
			e.shutdown()
			t.Fatalf("dial fixture: %v", err)
		}
		e.fx = fx
		sources = append(sources, catalog.Source{Connector: fx, Approve: s.fxApprove, NoApprove: s.fxNoApprove, Revert: s.fxRevert, ForwardUnknown: s.fxForward})
	}
	if s.notes {
		n := notes.New(notes.Name, st)
		e.notes = n
		sources = append(sources, catalog.Source{Connector: n})
	}
	sources = append(sources, s.extra...)
	var store codemode.Store = st
	if s.wrap != nil {
		store = s.wrap(st)
	}
	rt, err := runtime.New(ctx, runtime.Options{
		Store:          store,
		TypeCheck:      s.typeCheck,
		Executor:       e.exec,
		Sources:        sources,
		Limits:         s.limits,
		MaxExecutions:  s.maxExecs,
		PausedTTL:      s.ttl,
		MaxRunLogBytes: s.maxLog,
		Now:            nowOf(s.clock),
		Scrubber:       s.scrubber,
		Lease:          s.lease,
		TaskTimeout:    s.taskTimeout,
		Policy:         s.policy,
		AuditRetention: s.auditRetention,
		Tracer:         s.tracer,
		Logger:         s.logger,
		Metrics:        s.metrics,
	})
	if err != nil {
		e.shutdown()
		t.Fatalf("runtime.New: %v", err)
	}
	if s.hkEvery != 0 {
		runtime.SetHousekeepingInterval(rt, s.hkEvery)
	}
	if s.maxValue != 0 {
		runtime.SetMaxValueBytes(rt, s.maxValue)
	}
	switch {
	case s.writeThrough:
		runtime.SetGroupAge(rt, 0)
	case s.groupAge > 0:
		runtime.SetGroupAge(rt, s.groupAge)
	}
	e.rt = rt
}

// fxEnv is the fixture's environment: its side-effect file and extra.
func fxEnv(effects string, extra map[string]string) map[string]string {
	env := map[string]string{"FIXTURE_SIDE_EFFECTS": effects}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// nowOf is c.Now, or nil (the real clock) for a nil c.
func nowOf(c *fixture.Clock) func() time.Time {
	if c == nil {
		return nil
	}
	return c.Now
}

// orDiscard returns l, or a logger that discards everything.
func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// shutdown closes everything, in order; it is idempotent.
func (e *env) shutdown() {
	if e.down {
		return
	}
	e.down = true
	if e.rt != nil {
		if err := e.rt.Close(); err != nil {
			e.t.Errorf("close runtime: %v", err)
		}
		e.rt = nil
	}
	if e.exec != nil {
		if err := e.exec.Close(); err != nil {
			e.t.Errorf("close executor: %v", err)
		}
		e.exec = nil
	}
	if e.fx != nil {
		if err := e.fx.Close(); err != nil {
			e.t.Errorf("close fixture connector: %v", err)
		}
		e.fx = nil
	}
	if e.notes != nil {
		_ = e.notes.Close()
		e.notes = nil
	}
	if e.store != nil {
		if err := e.store.Close(); err != nil {
			e.t.Errorf("close store: %v", err)
		}
		e.store = nil
	}
}

// restart simulates a new process: everything is closed and opened again on
// the same database file.
func (e *env) restart(s setup) {
	e.t.Helper()
	e.shutdown()
	e.open(s)
}

func (e *env) run(code string, ap codemode.Approver) codemode.Outcome {
	e.t.Helper()
	o, err := e.rt.Execute(e.ctx, code, ap)
	if err != nil {
		e.t.Fatalf("Execute: %v", err)
	}
	return o
}

func (e *env) approve(id string, ap codemode.Approver) codemode.Outcome {
	e.t.Helper()
	o, err := e.rt.Approve(e.ctx, id, ap)
	if err != nil {
		e.t.Fatalf("Approve(%s): %v", id, err)
	}
	return o
}

// mustStatus fails unless o has the status, showing the whole outcome.
func mustStatus(t testing.TB, o codemode.Outcome, want codemode.ExecStatus) {
	t.Helper()
	if o.Status != want {
		b, _ := json.MarshalIndent(o, "", "  ")
		t.Fatalf("status = %s, want %s; outcome:\n%s", o.Status, want, b)
	}
}

// log renders an execution's log as "seq kind connector.method state".
func (e *env) log(id string) []string {
	e.t.Helper()
	_, entries, err := e.rt.Execution(e.ctx, id)
	if err != nil {
		e.t.Fatalf("Execution(%s): %v", id, err)
	}
	out := make([]string, len(entries))
	for i, en := range entries {
		name := en.Connector + "." + en.Method
		if en.Kind == codemode.KindStep {
			name = fmt.Sprintf("step(%s)", en.Name)
		}
		out[i] = fmt.Sprintf("%d %s %s", en.Seq, name, en.State)
	}
	return out
}

func (e *env) status(id string) codemode.ExecStatus {
	e.t.Helper()
	x, _, err := e.rt.Execution(e.ctx, id)
	if err != nil {
		e.t.Fatalf("Execution(%s): %v", id, err)
	}
	return x.Status
}

// effects counts the lines of the fixture's side-effect file equal to name.
func (e *env) effectCount(name string) int {
	e.t.Helper()
	f, err := os.Open(e.effects)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		e.t.Fatalf("open side effects: %v", err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == name {
			n++
		}
	}
	return n
}

// approverFunc adapts a function to runtime.Approver.
type approverFunc func(ctx context.Context, a codemode.PendingAction) (codemode.Decision, error)

func (f approverFunc) Ask(ctx context.Context, a codemode.PendingAction) (codemode.Decision, error) {
	return f(ctx, a)
}

// decide returns an approver that always answers d and counts questions.
func decide(d codemode.Decision, asked *[]codemode.PendingAction) codemode.Approver {
	return approverFunc(func(_ context.Context, a codemode.PendingAction) (codemode.Decision, error) {
		*asked = append(*asked, a)
		return d, nil
	})
}

// resultOf decodes a completed outcome's result.
func resultOf[T any](t testing.TB, o codemode.Outcome) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(o.Result, &v); err != nil {
		t.Fatalf("decode result %s: %v", o.Result, err)
	}
	return v
}

var _ connectors.Connector = (*mcp.Connector)(nil)
