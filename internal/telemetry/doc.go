// Package telemetry sets up what codemode-mcp tells an operator's
// observability stack: OpenTelemetry traces (traces.go) and metrics
// (metrics.go: OpenTelemetry instruments, served as Prometheus text or
// pushed over OTLP), and the trace ids on its log lines (log.go), built from the
// configuration's telemetry: key and the standard OTEL_* environment
// variables, with the file's keys winning where they are written.
//
// Everything is off by default: with no exporter configured there is no
// provider, and the packages that make spans (runtime, server) are given
// none, so a call pays one nil check for tracing and allocates nothing.
// What is built here has one owner, the process's wiring
// (internal/app), which shuts it down on exit so the last spans are
// flushed.
//
// Propagation of W3C trace context in and out of the process (MCP _meta,
// HTTP headers) is package propagate, which links the API only, so that the
// connectors carry a traceparent without linking the SDK or its exporters.
package telemetry
