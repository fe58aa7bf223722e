package config

// Telemetry configures what codemode-mcp tells an operator's
// observability stack (the telemetry: key). Every field is optional: an
// unset field leaves the standard OTEL_* environment variable (or its
// default) in charge, so the file's keys win over the environment only
// where they are written.
type Telemetry struct {
	// ServiceName is the service.name of what is exported
	// (telemetry.service_name); "" leaves OTEL_SERVICE_NAME, then
	// "codemode-mcp".
	ServiceName string `cfg:"service_name,nonempty"`
	// Traces configures the OpenTelemetry traces (telemetry.traces).
	Traces Traces `cfg:"traces"`
	// Metrics configures the metrics (telemetry.metrics).
	Metrics Metrics `cfg:"metrics"`
}

// Traces configures the export of OpenTelemetry traces (telemetry.traces).
// Tracing is off unless Exporter (or OTEL_TRACES_EXPORTER) is "otlp".
type Traces struct {
	// Exporter is "otlp", "none" or "" (unset: OTEL_TRACES_EXPORTER
	// decides, and tracing is off when that is unset too).
	Exporter string `cfg:"exporter,oneof=otlp|none"`
	// Endpoint is the URL the spans go to: for http/protobuf the full URL
	// of the traces (a URL with no path gets /v1/traces), for grpc the
	// collector's http:// (plaintext) or https:// address. "" leaves
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT.
	Endpoint string `cfg:"endpoint,url"`
	// Protocol is "grpc", "http/protobuf" or "" (OTEL_EXPORTER_OTLP_PROTOCOL,
	// default http/protobuf).
	Protocol string `cfg:"protocol,oneof=grpc|http/protobuf"`
	// Headers are sent with every export (an API key, say); their values
	// are secrets (Secrets). nil leaves OTEL_EXPORTER_OTLP_HEADERS.
	Headers map[string]string `cfg:"headers"`
	// Sample is the ratio of new traces sampled, 0 to 1, when set; a trace
	// the caller sampled (its traceparent) is followed either way. nil
	// leaves OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG (default: every
	// trace).
	Sample *float64 `cfg:"sample"`
}
