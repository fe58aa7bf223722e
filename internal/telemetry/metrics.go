package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// MeterName is the instrumentation scope of codemode-mcp's instruments.
const MeterName = "github.com/codemode-mcp/codemode-mcp"

// Histogram buckets, in seconds, for what each one measures: a call to a
// tool (a local process in a millisecond, a remote API in seconds), a run
// (its calls and its pauses), a commit, and a person's answer.
var (
	callBuckets     = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
	runBuckets      = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 86400}
	storeBuckets    = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}
	approvalBuckets = []float64{1, 5, 15, 30, 60, 300, 900, 1800, 3600, 4 * 3600, 24 * 3600}
)

// cardinalityLimit bounds the series of one instrument (past it the SDK
// folds new attribute sets into one overflow series), and maxCached the
// attribute sets CallDone keeps ready: method names come from programs.
const (
	cardinalityLimit = 2000
	maxCached        = 1024
	// maxMethodLabel bounds a method label's bytes: with forward_unknown a
	// program may name any method.
	maxMethodLabel = 128
)

// MetricsOptions configure NewMetrics.
type MetricsOptions struct {
	// Prometheus makes Handler serve Prometheus text.
	Prometheus bool
	// OTLP pushes the metrics over OTLP, to where the standard
	// OTEL_EXPORTER_OTLP_* variables say (OTEL_EXPORTER_OTLP_METRICS_PROTOCOL
	// or OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf", the default, or
	// "grpc"; every OTEL_METRIC_EXPORT_INTERVAL).
	OTLP bool
	// MethodNames labels call durations with the method too.
	MethodNames bool
	// ServiceName is the service.name of what is exported (the
	// configuration's; "" leaves OTEL_SERVICE_NAME, then
	// DefaultServiceName).
	ServiceName string
}

// Metrics records what codemode-mcp measures. A nil *Metrics records
// nothing: every method is safe on nil and costs a nil check, so callers
// hold one unconditionally and metrics that are off cost nothing on the
// paths they would measure. Its methods are safe for concurrent use and
// do not block.
type Metrics struct {
	// fixed at creation
	provider    *sdkmetric.MeterProvider
	meter       metric.Meter
	handler     http.Handler // nil without Prometheus
	methodNames bool

	runs         metric.Int64Counter
	runDuration  metric.Float64Histogram
	callDuration metric.Float64Histogram
	approvalWait metric.Float64Histogram
	storeWrite   metric.Float64Histogram
	downRestarts metric.Int64Counter
	signIns      metric.Int64Counter

	// callSets holds the record options of each (connector, method,
	// outcome) seen, as the slice Record takes, so that a call records
	// without allocating; cached counts them (at most maxCached).
	callSets sync.Map // callKey -> []metric.RecordOption
	cached   atomic.Int64
}

type callKey struct{ connector, method, outcome string }

// NewMetrics makes the instruments and the exporters opts asks for; with
// neither Prometheus nor OTLP it returns nil (metrics off). Shutdown stops
// it.
func NewMetrics(ctx context.Context, opts MetricsOptions) (*Metrics, error) {
	if !opts.Prometheus && !opts.OTLP {
		return nil, nil
	}
	res, err := newResource(ctx, opts.ServiceName)
	if err != nil {
		return nil, err
	}
	m := &Metrics{methodNames: opts.MethodNames}
	pOpts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithCardinalityLimit(cardinalityLimit)}
	if opts.Prometheus {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
		if err != nil {
			return nil, fmt.Errorf("prometheus exporter: %w", err)
		}
		pOpts = append(pOpts, sdkmetric.WithReader(exp))
		m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{
			// A scrape that fails says so in its answer, not in our log.
			ErrorHandling:       promhttp.ContinueOnError,
			EnableOpenMetrics:   true,
			MaxRequestsInFlight: 4,
		})
	}
	if opts.OTLP {
		exp, err := otlpExporter(ctx)
		if err != nil {
			return nil, err
		}
		pOpts = append(pOpts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	m.provider = sdkmetric.NewMeterProvider(pOpts...)
	m.meter = m.provider.Meter(MeterName)
	if err := m.instruments(); err != nil {
		_ = m.provider.Shutdown(ctx)
		return nil, err
	}
	return m, nil
}

// otlpExporter is the OTLP metric exporter of the protocol the environment
// names.
func otlpExporter(ctx context.Context) (sdkmetric.Exporter, error) {
	proto, err := otlpProtocol(os.Getenv, "METRICS", "", "")
	if err != nil {
		return nil, fmt.Errorf("OTLP metrics: %w", err)
	}
	var exp sdkmetric.Exporter
	if proto == ProtocolGRPC {
		exp, err = otlpmetricgrpc.New(ctx)
	} else {
		exp, err = otlpmetrichttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("OTLP metrics exporter: %w", err)
	}
	return exp, nil
}

// instruments makes the instruments (OpenTelemetry's dotted names;
// Prometheus text has them with underscores and the unit or _total
// appended: codemode_runs_total, codemode_call_duration_seconds; the
// README's table lists both).
func (m *Metrics) instruments() error {
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	histogram := func(name, desc string, buckets []float64) metric.Float64Histogram {
		h, err := m.meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(buckets...))
		errs = append(errs, err)
		return h
	}
	m.runs = counter("codemode.runs", "{run}",
		"Runs that reached a final status, by status (a run rolled back after it completed counts under both).")
	m.runDuration = histogram("codemode.run.duration",
		"Time from a run's start to its final status, pauses included, by status.", runBuckets)
	m.callDuration = histogram("codemode.call.duration",
		"Duration of the connector calls programs make (replayed calls excluded), by connector and outcome.", callBuckets)
	m.approvalWait = histogram("codemode.approval.wait",
		"Time a paused run waited for a person, by decision.", approvalBuckets)
	m.storeWrite = histogram("codemode.store.write.duration",
		"Latency of writes to the execution log, by operation and outcome.", storeBuckets)
	m.downRestarts = counter("codemode.downstream.restarts", "{restart}",
		"Downstream MCP servers started again (stdio) or reconnected (HTTP) after a failure, by connector.")
	m.signIns = counter("codemode.downstream.sign_ins", "{sign_in}",
		"Sign-ins to remote MCP servers that ended, by connector and outcome.")
	return errors.Join(errs...)
}

// Handler serves the metrics as Prometheus text (or OpenMetrics, when
// asked); nil when Prometheus is off.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return nil
	}
	return m.handler
}

// Shutdown pushes what OTLP has not sent yet and stops the exporters.
func (m *Metrics) Shutdown(ctx context.Context) error {
	if m == nil {
		return nil
	}
	return m.provider.Shutdown(ctx)
}

// Outcomes of calls, store writes and sign-ins.
const (
	OutcomeOK    = "ok"
	OutcomeError = "error"
)

func outcome(err error) string {
	if err != nil {
		return OutcomeError
	}
	return OutcomeOK
}

// RunEnded counts a run that reached final status status (completed,
// error, rejected, cancelled, rolled_back) after d since it started.
func (m *Metrics) RunEnded(ctx context.Context, status string, d time.Duration) {
	if m == nil {
		return
	}
	set := metric.WithAttributeSet(attribute.NewSet(attribute.String("status", status)))
	m.runs.Add(ctx, 1, set)
	m.runDuration.Record(ctx, d.Seconds(), set)
}

// CallDone records a connector call that took d and ended ok or not
// (outcome OutcomeOK, OutcomeError). The method is a label only with
// MethodNames.
func (m *Metrics) CallDone(ctx context.Context, connector, method, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	switch {
	case !m.methodNames:
		method = ""
	case len(method) > maxMethodLabel:
		method = strings.ToValidUTF8(method[:maxMethodLabel], "")
	}
	m.callDuration.Record(ctx, d.Seconds(), m.callSet(callKey{connector, method, outcome})...)
}

// callSet returns the record options of k, kept for the next call while
// fewer than maxCached are kept.
func (m *Metrics) callSet(k callKey) []metric.RecordOption {
	if v, ok := m.callSets.Load(k); ok {
		return v.([]metric.RecordOption)
	}
	attrs := []attribute.KeyValue{attribute.String("connector", k.connector), attribute.String("outcome", k.outcome)}
	if k.method != "" {
		attrs = append(attrs, attribute.String("method", k.method))
	}
	set := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	if m.cached.Load() < maxCached {
		if _, loaded := m.callSets.LoadOrStore(k, set); !loaded {
			m.cached.Add(1)
		}
	}
	return set
}

// ApprovalDecided records how long a paused run waited for a person
// before decision (approved, rejected, cancelled, expired).
func (m *Metrics) ApprovalDecided(ctx context.Context, decision string, waited time.Duration) {
	if m == nil {
		return
	}
	m.approvalWait.Record(ctx, waited.Seconds(), metric.WithAttributeSet(attribute.NewSet(attribute.String("decision", decision))))
}

// StoreWrite records a write to the execution log (op names the store
// method) that took d and failed with err, if not nil.
func (m *Metrics) StoreWrite(ctx context.Context, op string, d time.Duration, err error) {
	if m == nil {
		return
	}
	m.storeWrite.Record(ctx, d.Seconds(), metric.WithAttributeSet(attribute.NewSet(attribute.String("op", op), attribute.String("outcome", outcome(err)))))
}

// DownstreamRestarted counts a downstream server of connector started
// again or reconnected after a failure.
func (m *Metrics) DownstreamRestarted(connector string) {
	if m == nil {
		return
	}
	m.downRestarts.Add(context.Background(), 1, metric.WithAttributeSet(attribute.NewSet(attribute.String("connector", connector))))
}

// SignInEnded counts a sign-in of connector that ended, with its error if
// it failed (abandoned, timed out, refused).
func (m *Metrics) SignInEnded(connector string, err error) {
	if m == nil {
		return
	}
	m.signIns.Add(context.Background(), 1, metric.WithAttributeSet(attribute.NewSet(attribute.String("connector", connector), attribute.String("outcome", outcome(err)))))
}

// WorkerStats is what the sandbox's worker pool reports on each
// collection.
type WorkerStats struct {
	Idle, Busy int   // workers alive now, waiting or running a program
	Restarts   int64 // workers replaced since start after they could not run again
}

// ObserveWorkers reports stats on each collection: the pool's workers by
// state and how many were replaced. The returned func stops it.
func (m *Metrics) ObserveWorkers(stats func() WorkerStats) (stop func(), err error) {
	if m == nil {
		return func() {}, nil
	}
	workers, err1 := m.meter.Int64ObservableGauge("codemode.sandbox.workers", metric.WithUnit("{worker}"),
		metric.WithDescription("Sandbox worker processes alive, by state (idle, busy)."))
	restarts, err2 := m.meter.Int64ObservableCounter("codemode.sandbox.worker.restarts", metric.WithUnit("{worker}"),
		metric.WithDescription("Sandbox worker processes replaced after a crash, a kill, a timeout or the memory limit."))
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	idle := metric.WithAttributeSet(attribute.NewSet(attribute.String("state", "idle")))
	busy := metric.WithAttributeSet(attribute.NewSet(attribute.String("state", "busy")))
	reg, err := m.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := stats()
		o.ObserveInt64(workers, int64(s.Idle), idle)
		o.ObserveInt64(workers, int64(s.Busy), busy)
		o.ObserveInt64(restarts, s.Restarts)
		return nil
	}, workers, restarts)
	if err != nil {
		return nil, err
	}
	return func() { _ = reg.Unregister() }, nil
}

// ObservePending reports count on each collection: the runs paused for a
// person (an approval or a sign-in). count reads the store, so it sees the
// runs every process sharing it paused; it gets a context bounded to a
// few seconds. The returned func stops it.
func (m *Metrics) ObservePending(count func(ctx context.Context) (int64, error)) (stop func(), err error) {
	if m == nil {
		return func() {}, nil
	}
	pending, err := m.meter.Int64ObservableGauge("codemode.approvals.pending", metric.WithUnit("{run}"),
		metric.WithDescription("Runs paused for a person (an approval or a sign-in), as the execution log has them."))
	if err != nil {
		return nil, err
	}
	reg, err := m.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		n, err := count(ctx)
		if err != nil {
			return fmt.Errorf("count paused runs: %w", err)
		}
		o.ObserveInt64(pending, n)
		return nil
	}, pending)
	if err != nil {
		return nil, err
	}
	return func() { _ = reg.Unregister() }, nil
}
