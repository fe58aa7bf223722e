package config

import (
	"fmt"
	"strings"
)

// EnvMetricsExporter is OpenTelemetry's variable choosing the metrics
// exporter; telemetry.metrics.exporter wins over it.
const EnvMetricsExporter = "OTEL_METRICS_EXPORTER"

// DefaultMetricsAddr is the address the README suggests for the separate
// metrics listener (Prometheus's registered port for OpenTelemetry's
// exporter); nothing listens unless telemetry.metrics.addr or
// --metrics-addr names an address.
const DefaultMetricsAddr = "127.0.0.1:9464"

// Metrics configures what the server measures and where it goes
// (telemetry.metrics). The zero value measures nothing.
type Metrics struct {
	// Exporter is "prometheus" (Prometheus text at /metrics), "otlp"
	// (pushed over OTLP, configured by the OTEL_EXPORTER_OTLP_* variables)
	// or "none"; "" when the file does not say (then
	// EnvMetricsExporter decides, see Exporters).
	Exporter string `cfg:"exporter,oneof=prometheus|otlp|none"`
	// Addr, when set, is a listener of its own serving Prometheus text at
	// /metrics without authentication (it implies Prometheus text).
	Addr string `cfg:"addr,nonempty,check=listen"`
	// MethodNames labels call durations with the method as well as the
	// connector. Off by default: every method a program names would be a
	// series of its own.
	MethodNames bool `cfg:"method_names"`
}

// Exporters returns the exporters in force: Prometheus text when
// Exporter or the environment asks for it or Addr is set, OTLP when
// Exporter or the environment asks for it. lookup reads the environment
// (os.LookupEnv). An unknown name in EnvMetricsExporter is an error naming
// it.
func (m Metrics) Exporters(lookup func(string) (string, bool)) (prometheus, otlp bool, err error) {
	names := []string{m.Exporter}
	if m.Exporter == "" {
		if v, ok := lookup(EnvMetricsExporter); ok {
			names = strings.Split(v, ",")
		}
	}
	for _, n := range names {
		switch strings.ToLower(strings.TrimSpace(n)) {
		case "", "none":
		case "prometheus":
			prometheus = true
		case "otlp":
			otlp = true
		default:
			return false, false, fmt.Errorf("%s=%q: want prometheus, otlp or none (comma-separated)", EnvMetricsExporter, strings.Join(names, ","))
		}
	}
	return prometheus || m.Addr != "", otlp, nil
}

// CheckListenAddr checks a listen address written host:port; the error
// names what is wrong.
func CheckListenAddr(v string) error {
	return checkHostPort(v, DefaultMetricsAddr)
}
