package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/codemode-mcp/codemode-mcp/config"
)

// DefaultServiceName is the service.name of what is exported when neither
// telemetry.service_name nor OTEL_SERVICE_NAME names one.
const DefaultServiceName = "codemode-mcp"

// Protocols of the OTLP exporter.
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http/protobuf"
)

// TraceSettings is what the traces are exported with once the file and
// the environment are resolved (ResolveTraces).
type TraceSettings struct {
	// On is whether traces are exported at all.
	On bool
	// Protocol is ProtocolGRPC or ProtocolHTTP.
	Protocol string
	// Endpoint is the file's endpoint, "" to leave the exporter's own
	// reading of OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT.
	Endpoint string
	// Headers are the file's headers, nil to leave
	// OTEL_EXPORTER_OTLP_(TRACES_)HEADERS.
	Headers map[string]string
	// Sample is the file's ratio, nil to leave OTEL_TRACES_SAMPLER.
	Sample *float64
	// ServiceName is the file's service name, "" to leave
	// OTEL_SERVICE_NAME, then DefaultServiceName.
	ServiceName string
}

// ResolveTraces decides the trace settings from the configuration and the
// environment (getenv): the file's keys win where they are written.
// Tracing is on only when the exporter is otlp (telemetry.traces.exporter,
// else OTEL_TRACES_EXPORTER) and OTEL_SDK_DISABLED is not true: unlike the
// OpenTelemetry default, an unset exporter is none, so that nothing is
// exported (and nothing is spent) unless asked for.
func ResolveTraces(cfg config.Telemetry, getenv func(string) string) (TraceSettings, error) {
	t := cfg.Traces
	s := TraceSettings{Endpoint: t.Endpoint, Headers: t.Headers, Sample: t.Sample, ServiceName: cfg.ServiceName}
	exporter, from := t.Exporter, "telemetry.traces.exporter"
	if exporter == "" {
		exporter, from = strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")), "OTEL_TRACES_EXPORTER"
	}
	switch strings.ToLower(exporter) {
	case "", "none":
		return s, nil
	case "otlp":
	default:
		// (A list such as "otlp,console" is the specification's too; one
		// exporter is all this process offers.)
		return s, fmt.Errorf("%s is %q: the traces exporter must be otlp or none", from, exporter)
	}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return s, nil
	}
	s.On = true
	var err error
	if s.Protocol, err = otlpProtocol(getenv, "TRACES", t.Protocol, "telemetry.traces.protocol"); err != nil {
		return s, err
	}
	if s.Endpoint != "" && s.Protocol == ProtocolHTTP {
		// The file names a collector the way people write it; the
		// exporter takes a URL's path as it is.
		if u, err := url.Parse(s.Endpoint); err == nil && (u.Path == "" || u.Path == "/") {
			u.Path = "/v1/traces"
			s.Endpoint = u.String()
		}
	}
	return s, nil
}

// otlpProtocol is the OTLP protocol of signal (TRACES, METRICS): the
// file's (written at key), else OTEL_EXPORTER_OTLP_<signal>_PROTOCOL's, else
// OTEL_EXPORTER_OTLP_PROTOCOL's, else ProtocolHTTP; an error names where an
// unsupported one was written.
func otlpProtocol(getenv func(string) string, signal, file, key string) (string, error) {
	proto, from := file, key
	for _, name := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if proto == "" {
			proto, from = strings.TrimSpace(getenv(name)), name
		}
	}
	switch proto {
	case "":
		return ProtocolHTTP, nil
	case ProtocolGRPC, ProtocolHTTP:
		return proto, nil
	}
	return "", fmt.Errorf("%s is %q: the OTLP protocol must be %s or %s", from, proto, ProtocolGRPC, ProtocolHTTP)
}

// Tracing is the process's trace pipeline: a provider whose spans are
// batched to an exporter. A nil *Tracing is tracing off; its methods are
// safe on nil.
type Tracing struct {
	provider *sdktrace.TracerProvider
}

// NewTracing builds the trace pipeline of cfg and the environment
// (getenv), or returns nil when tracing is off. Export failures are
// logged to log (they never fail a run). The caller owns the result and
// must Shutdown it.
func NewTracing(ctx context.Context, cfg config.Telemetry, getenv func(string) string, log *slog.Logger) (*Tracing, error) {
	s, err := ResolveTraces(cfg, getenv)
	if err != nil || !s.On {
		return nil, err
	}
	res, err := newResource(ctx, s.ServiceName)
	if err != nil {
		return nil, err
	}
	exp, err := newExporter(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("telemetry: the OTLP trace exporter (%s): %w", s.Protocol, err)
	}
	if log != nil {
		// The SDK reports export failures here (once per failed batch);
		// the default would print them with the standard logger.
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			log.Warn("telemetry: exporting spans failed", "err", err)
		}))
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res), sdktrace.WithBatcher(exp)}
	if s.Sample != nil {
		// A caller's sampled trace is followed; a new one is sampled at
		// the ratio (the specification's parentbased_traceidratio).
		opts = append(opts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(*s.Sample))))
	}
	return &Tracing{provider: sdktrace.NewTracerProvider(opts...)}, nil
}

// newResource describes this process: service.name (the file's, else
// OTEL_SERVICE_NAME, else DefaultServiceName) and OTEL_RESOURCE_ATTRIBUTES.
func newResource(ctx context.Context, serviceName string) (*resource.Resource, error) {
	opts := []resource.Option{
		resource.WithAttributes(attribute.String("service.name", DefaultServiceName)),
		resource.WithFromEnv(), // later options win
	}
	if serviceName != "" {
		opts = append(opts, resource.WithAttributes(attribute.String("service.name", serviceName)))
	}
	res, err := resource.New(ctx, opts...)
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry: describe the service: %w", err)
	}
	// (A partial resource, from a malformed OTEL_RESOURCE_ATTRIBUTES, is
	// used as it is: the specification says to go on.)
	return res, nil
}

// newExporter makes the OTLP exporter of s; what s leaves unset the
// exporter reads from the OTEL_EXPORTER_OTLP_* variables itself (endpoint,
// headers, timeout, compression, certificates).
func newExporter(ctx context.Context, s TraceSettings) (sdktrace.SpanExporter, error) {
	if s.Protocol == ProtocolGRPC {
		return otlptracegrpc.New(ctx, exporterOptions(s, otlptracegrpc.WithEndpointURL, otlptracegrpc.WithHeaders)...)
	}
	return otlptracehttp.New(ctx, exporterOptions(s, otlptracehttp.WithEndpointURL, otlptracehttp.WithHeaders)...)
}

// exporterOptions are the options of either protocol's exporter that s
// sets (its endpoint, its headers).
func exporterOptions[O any](s TraceSettings, endpoint func(string) O, headers func(map[string]string) O) []O {
	var opts []O
	if s.Endpoint != "" {
		opts = append(opts, endpoint(s.Endpoint))
	}
	if s.Headers != nil {
		opts = append(opts, headers(s.Headers))
	}
	return opts
}

// TracerProvider returns the provider the packages that make spans are
// given, or nil when tracing is off (they then make none).
func (t *Tracing) TracerProvider() trace.TracerProvider {
	if t == nil {
		return nil
	}
	return t.provider
}

// Shutdown flushes the spans not yet exported and stops the exporter,
// within ctx.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	if err := t.provider.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("telemetry: flush the spans: %w", err)
	}
	return nil
}
