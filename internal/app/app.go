// Package app wires a configuration into running parts: the store, the
// connectors, the sandbox executor and the runtime. The command line and the
// end-to-end tests share it; it owns everything it starts and Close stops
// and waits for all of it.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/connectors/mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors/notes"
	"github.com/codemode-mcp/codemode-mcp/connectors/openapi"
	"github.com/codemode-mcp/codemode-mcp/internal/appdirs"
	"github.com/codemode-mcp/codemode-mcp/internal/backoff"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/internal/telemetry"
	"github.com/codemode-mcp/codemode-mcp/internal/tscheck"
	rt "github.com/codemode-mcp/codemode-mcp/runtime"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/pass"
	"github.com/codemode-mcp/codemode-mcp/sandbox/worker"
)

// Options adjust Open.
type Options struct {
	// DBPath overrides store.path (the --db flag).
	DBPath string
	Logger *slog.Logger
	// Tokens is where url connectors keep their OAuth grants and client
	// registrations (nil: the store), sealed by DefaultSealer. check reads
	// the configured store's tokens while it runs on a scratch store.
	Tokens connectors.Records

	// Metrics, when set, hears what the app measures: the runtime's runs,
	// calls and approval waits, store writes, the sandbox's workers,
	// downstream restarts and sign-ins (package telemetry). Nil measures
	// nothing and wraps nothing. The caller shuts it down after Close.
	Metrics *telemetry.Metrics
}

// App is a running configuration.
type App struct {
	Config   *config.Config
	Store    Store
	Runtime  *rt.Runtime
	Executor sandbox.Executor
	// Connectors are the connectors that started, in config order. (A
	// downstream that joins later, see Open, is not added to it: Close
	// closes it all the same.)
	Connectors []connectors.Connector
	// Warnings are problems that did not stop start-up (a downstream that
	// failed to start, tool names that collided), scrubbed of secrets; each
	// is logged too, at warn level. They are not updated when such a
	// downstream joins later.
	Warnings []string
	// Scrubber holds every secret of the configuration (Config.Secrets)
	// and those connectors obtain at run time; what the model sees, what is
	// stored and what is logged passes through it.
	Scrubber *scrub.Scrubber
	// Log is the logger everything the app started logs to: Options.Logger
	// with every record scrubbed.
	Log *slog.Logger
	// Tracing is the OpenTelemetry trace pipeline (telemetry.traces and
	// the OTEL_* variables), nil when tracing is off; Close flushes it.
	Tracing *telemetry.Tracing

	refresh *refresher
	tokens  oauth.Store        // Options.Tokens, else Store
	sealer  *oauth.Sealer      // DefaultSealer
	metrics *telemetry.Metrics // Options.Metrics; nil measures nothing
	// unobserve stops the metrics' collection callbacks (Close).
	unobserve []func()
}

// Open starts everything cfg describes. Downstream servers start
// concurrently; one that fails does not stop the others: it is reported in
// Warnings and as an unavailable connector. Open waits for an MCP server
// at most its start timeout (the connector's start_timeout, else
// server.start_timeout): one that has not answered by then is unavailable
// too, and joins when it answers. A downstream that is down (an
// MCP server, an OpenAPI document at a URL) is tried again in the
// background by its own connector (mcp.Open, openapi.Open: one backoff,
// internal/backoff) and joins when it can be reached: its tools are
// listed again (see refresher) and OnConnectorsChanged's function is
// called then.
func Open(ctx context.Context, cfg *config.Config, opts Options) (_ *App, err error) {
	log := cmp.Or(opts.Logger, slog.Default())
	scrubber := scrub.New(append(cfg.Secrets(), config.DatabaseURLSecrets(opts.DBPath)...)...)
	log = slog.New(scrub.NewHandler(log.Handler(), scrubber))
	a := &App{Config: cfg, Scrubber: scrubber, Log: log, metrics: opts.Metrics}
	a.refresh = newRefresher(a)
	for _, w := range cfg.Warnings {
		a.warn(w.String())
	}
	dbPath, err := StorePath(cfg, opts.DBPath)
	if err != nil {
		return nil, err
	}
	if cfg.Store.Path == "" && opts.DBPath == "" {
		a.warnOldDefault(dbPath)
	}
	st, err := OpenStore(ctx, cfg, dbPath, log)
	if err != nil {
		if opts.DBPath == "" {
			err = located(cfg, err)
		}
		return nil, err
	}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	st = meterStore(st, a.metrics)
	a.Store = st
	a.tokens, a.sealer = cmp.Or(opts.Tokens, connectors.Records(st)), DefaultSealer()

	sources, err := a.startConnectors(ctx)
	if err != nil {
		return nil, err
	}
	if a.Executor, err = newExecutor(cfg, log); err != nil {
		return nil, err
	}
	if a.Tracing, err = telemetry.NewTracing(ctx, cfg.Telemetry, os.Getenv, log); err != nil {
		return nil, err
	}
	var typeCheck rt.TypeChecker
	if cfg.Sandbox.TypeCheck == "tsc" {
		tc, err := tscheck.Find(log)
		if err != nil {
			return nil, fmt.Errorf("sandbox.typecheck is tsc, but %w", err)
		}
		typeCheck = tc
	}
	var metrics rt.Metrics
	if a.metrics != nil {
		metrics = a.metrics // not a nil *Metrics in an interface
	}
	r, err := rt.New(ctx, rt.Options{
		Store:    st,
		Executor: a.Executor,
		Sources:  sources,
		Limits: sandbox.Limits{
			Timeout:       cfg.Sandbox.Timeout,
			MaxCalls:      cfg.Sandbox.MaxCalls,
			MaxStackDepth: cfg.Sandbox.MaxStackDepth,
		},
		MaxExecutions:  cfg.Store.MaxExecutions,
		PausedTTL:      cfg.Store.PausedTTL,
		AuditRetention: cfg.Store.AuditRetention,
		Policy:         cfg.Policy(),
		MaxRunLogBytes: cfg.Store.MaxRunLog,
		Lease:          cfg.Store.Lease,
		TaskTimeout:    cfg.Sandbox.TaskTimeout,
		Scrubber:       a.Scrubber,
		TypeCheck:      typeCheck,
		Metrics:        metrics,
		Logger:         log,
		Tracer:         a.Tracing.TracerProvider(),
	})
	if err != nil {
		return nil, fmt.Errorf("start runtime: %w", err)
	}
	a.Runtime = r
	if err := a.observe(); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	a.refresh.start()
	for _, ci := range r.Connectors() {
		if ci.Error != "" {
			// Located as start-up errors are ("file:line: ").
			w := config.Warning{File: cfg.Path, Msg: fmt.Sprintf("connector %s is unavailable: %s", ci.Name, ci.Error)}
			if i := slices.IndexFunc(cfg.Connectors, func(cc config.Connector) bool { return cc.Name == ci.Name }); i >= 0 {
				w.Line = cfg.Connectors[i].Line
			}
			a.warn(w.String())
		}
	}
	return a, nil
}

// warn records and logs a start-up warning, scrubbed.
func (a *App) warn(w string) {
	w = a.Scrubber.String(w)
	a.Warnings = append(a.Warnings, w)
	a.Log.Warn(w)
}

// startConnectors starts every configured connector concurrently.
func (a *App) startConnectors(ctx context.Context) ([]catalog.Source, error) {
	cfg := a.Config
	conns := make([]connectors.Connector, len(cfg.Connectors))
	errs := make([]error, len(cfg.Connectors))
	var wg sync.WaitGroup
	for i, cc := range cfg.Connectors {
		wg.Go(func() {
			// Every error here stops start-up: it is a configuration
			// mistake, since a downstream that is down starts unavailable.
			// It says where the file has the connector ("file:line: ",
			// as config's errors do).
			if conns[i], errs[i] = a.startConnector(ctx, cc); errs[i] != nil {
				errs[i] = fmt.Errorf("fatal: %s%w", (&config.Error{File: cfg.Path, Line: cc.Line}).Error(), errs[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
		return nil, err
	}
	var sources []catalog.Source
	for i, cc := range cfg.Connectors {
		c := conns[i]
		for _, d := range c.Capabilities().Diagnostics {
			a.warn(fmt.Sprintf("connector %s: %s", cc.Name, d))
		}
		a.Connectors = append(a.Connectors, c)
		sources = append(sources, catalog.Source{Connector: c, Approve: cc.Approve, NoApprove: cc.NoApprove, Revert: cc.Revert, Description: cc.Description, ForwardUnknown: cc.ForwardUnknown})
	}
	return sources, nil
}

// startConnector starts the connector cc configures, under its configured
// name.
func (a *App) startConnector(ctx context.Context, cc config.Connector) (connectors.Connector, error) {
	switch cc.Kind {
	case config.KindBuiltin:
		switch cc.Builtin {
		case notes.Name:
			n := notes.New(cc.Name, a.Store)
			n.Logger = a.Log
			return n, nil
		}
		return nil, fmt.Errorf("connector %s: unknown builtin %q", cc.Name, cc.Builtin)
	case config.KindStdio, config.KindHTTP, config.KindSSE:
		var signedIn func(error)
		if a.metrics != nil {
			signedIn = func(err error) { a.metrics.SignInEnded(cc.Name, err) }
		}
		// Open: a server that is down comes up by itself later (its
		// Tools report why meanwhile, so the runtime shows it
		// unavailable), and OnToolsChanged brings its tools in. One that
		// needs a sign-in waits for it.
		mc := mcpConfig(cc, nil, a.Scrubber, a.Log, func() { a.refresh.changed(cc.Name) })
		mc.StartTimeout = cmp.Or(cc.StartTimeout, a.Config.Server.StartTimeout)
		if cc.PerUser() {
			return a.startPerUser(cc, mc, signedIn)
		}
		var err error
		if mc.OAuth, err = OAuthFor(cc, "", a.tokens, a.sealer, a.Scrubber, a.Log, signedIn); err != nil {
			return nil, err
		}
		if a.metrics != nil {
			mc.OnRestart = func() { a.metrics.DownstreamRestarted(cc.Name) }
		}
		c, err := mcp.Open(ctx, mc)
		if err != nil {
			return nil, fmt.Errorf("connector %s: %w", cc.Name, err)
		}
		return c, nil
	case config.KindOpenAPI:
		ocfg := openapi.Config{
			Name:        cc.Name,
			Document:    cc.OpenAPI,
			BaseURL:     cc.BaseURL,
			Headers:     cc.Headers,
			Auth:        openAPIAuth(cc.Auth),
			Include:     cc.Operations.Include,
			Exclude:     cc.Operations.Exclude,
			CallTimeout: cc.Timeout,
			CacheDir:    CacheDir(a.Config),
			Scrubber:    a.Scrubber,
			Logger:      a.Log,
		}
		// A document not read (a URL offline without a cached copy, a
		// file missing or not yet valid) leaves the connector unavailable
		// with the reason, as a server that is down does, and is read
		// again in the background; its tools come in when it loads.
		retry := backoff.Policy{First: cc.RestartDelay, Max: cc.MaxRestartDelay}
		c, err := openapi.Open(ctx, ocfg, retry, func() { a.refresh.changed(cc.Name) })
		if err != nil {
			return nil, fmt.Errorf("connector %s: %w", cc.Name, err)
		}
		return c, nil
	}
	return nil, fmt.Errorf("connector %s: unknown kind %v", cc.Name, cc.Kind)
}

// startPerUser starts a url connector with credentials: per_user: one
// connection and one grant for each person (mcp.PerUser), each person's
// OAuth client made as OAuthFor makes the shared one.
func (a *App) startPerUser(cc config.Connector, mc mcp.Config, signedIn func(error)) (connectors.Connector, error) {
	c, err := mcp.OpenPerUser(mcp.PerUserConfig{
		Config: mc,
		Session: func(user string) (*oauth.Session, error) {
			s, err := OAuthFor(cc, user, a.tokens, a.sealer, a.Scrubber, a.Log, signedIn)
			if err == nil && s == nil {
				err = fmt.Errorf("connector %s: credentials: per_user, but it does not sign in", cc.Name)
			}
			return s, err
		},
		Store:    a.tokens,
		Exchange: cc.TokenExchange != nil,
	})
	if err != nil {
		return nil, fmt.Errorf("connector %s: %w", cc.Name, err)
	}
	return c, nil
}

// openAPIAuth converts configured credentials. Each part converts as it
// is, since config's types and openapi's have the same fields: one that
// gains a field the other lacks stops the build here.
func openAPIAuth(a *config.Auth) *openapi.Auth {
	if a == nil {
		return nil
	}
	return &openapi.Auth{Bearer: a.Bearer, Basic: (*openapi.BasicAuth)(a.Basic), APIKey: (*openapi.APIKey)(a.APIKey), OAuth2: (*openapi.OAuth2)(a.OAuth2)}
}

// StorePath is the store a command uses: db (the --db flag) when set,
// else store.path, else codemode.db in the user's data directory. It is a
// SQLite file path or a PostgreSQL URL (config.IsPostgresURL).
func StorePath(cfg *config.Config, db string) (string, error) {
	if loc := cmp.Or(db, cfg.Store.Path); loc != "" {
		return loc, nil
	}
	dir, err := appdirs.Data()
	if err != nil {
		return "", fmt.Errorf("no data directory for the execution log (set store.path or --db): %w", err)
	}
	return filepath.Join(dir, DefaultStoreFile), nil
}

// DefaultStoreFile is the name of the SQLite file in the data directory.
const DefaultStoreFile = "codemode.db"

// warnOldDefault points at a codemode.db in the working directory, where
// the log was kept by default before it moved to the data directory: it
// is no longer used unless store.path or --db names it.
func (a *App) warnOldDefault(dbPath string) {
	abs, err := filepath.Abs(DefaultStoreFile)
	if err != nil || abs == dbPath {
		return
	}
	if fi, err := os.Stat(abs); err == nil && fi.Mode().IsRegular() {
		a.Log.Warn("the execution log is kept in the data directory now; the codemode.db in the working directory is not used (set store.path or --db to keep using it)",
			"log", dbPath, "unused", abs)
	}
}

// CacheDir is store.cache_dir, or the user's cache directory's
// codemode-mcp folder ("" when there is none: nothing is cached).
func CacheDir(cfg *config.Config) string {
	d, _ := appdirs.Cache() // "" when there is none
	return cmp.Or(cfg.Store.CacheDir, d)
}

// newExecutor returns the executor sandbox.isolation selects: a pool of
// worker processes ("process"), or goja in this process ("inprocess", and
// where worker processes are not supported, with a warning).
func newExecutor(cfg *config.Config, log *slog.Logger) (sandbox.Executor, error) {
	if cfg.Sandbox.Isolation != "process" {
		return pass.NewInProcess(pass.InProcessOptions{Logger: log}), nil
	}
	// This executable with the hidden sub-command: a test binary that uses
	// process isolation handles it in its TestMain.
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox worker command: %w", err)
	}
	limiter := worker.LimiterSystem // sandbox.memory_limiter's default, "system"
	if cfg.Sandbox.MemoryLimiter == "sampling" {
		limiter = worker.LimiterSampling
	}
	pool, err := worker.NewPool(worker.Options{
		Command:     []string{exe, worker.Subcommand},
		MemoryLimit: cfg.Sandbox.MemoryLimit,
		Limiter:     limiter,
		Logger:      log,
	})
	if errors.Is(err, errors.ErrUnsupported) {
		log.Warn("sandbox: process isolation is not supported on this system; programs run in process, without a memory limit")
		return pass.NewInProcess(pass.InProcessOptions{Logger: log}), nil
	}
	if err != nil {
		return nil, fmt.Errorf("start the sandbox workers: %w", err)
	}
	return pool, nil
}

// observe registers what the metrics read when they are collected: the
// runs paused for a person, from the store (every process sharing it
// sees the same count), and the sandbox pool's workers.
func (a *App) observe() error {
	if a.metrics == nil {
		return nil
	}
	stop, err := a.metrics.ObservePending(func(ctx context.Context) (int64, error) {
		paused, err := a.Store.ListExecutions(ctx, codemode.ExecutionFilter{Status: codemode.StatusPaused, Brief: true}) // (a count, at every scrape)
		return int64(len(paused)), err
	})
	if err != nil {
		return err
	}
	a.unobserve = append(a.unobserve, stop)
	if pool, ok := a.Executor.(*worker.Pool); ok {
		stop, err := a.metrics.ObserveWorkers(func() telemetry.WorkerStats {
			s := pool.Stats()
			return telemetry.WorkerStats{Idle: s.Idle, Busy: s.Busy, Restarts: s.Replaced}
		})
		if err != nil {
			return err
		}
		a.unobserve = append(a.unobserve, stop)
	}
	return nil
}

// Close stops the runtime, the executor, every connector (concurrently,
// waiting for downstream processes and for the connectors' own retries),
// and the store.
func (a *App) Close() error {
	for _, stop := range a.unobserve {
		stop()
	}
	a.refresh.stop()
	var errs []error
	if a.Runtime != nil {
		errs = append(errs, a.Runtime.Close())
	}
	if a.Executor != nil {
		errs = append(errs, a.Executor.Close())
	}
	conns := a.Connectors
	var wg sync.WaitGroup
	cerrs := make([]error, len(conns))
	for i, c := range conns {
		wg.Go(func() { cerrs[i] = c.Close() })
	}
	wg.Wait()
	errs = append(errs, cerrs...)
	if a.Store != nil {
		errs = append(errs, a.Store.Close())
	}
	if a.Tracing != nil {
		// The spans of the runs that just ended go out before the process
		// does, for as long as a collector that answers needs.
		ctx, cancel := context.WithTimeout(context.Background(), tracingFlushTimeout)
		errs = append(errs, a.Tracing.Shutdown(ctx))
		cancel()
	}
	return errors.Join(errs...)
}

// tracingFlushTimeout bounds how long Close waits for the last spans to
// be exported.
const tracingFlushTimeout = 5 * time.Second
