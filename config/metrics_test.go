package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTelemetryMetricsAndLog(t *testing.T) {
	src := `
telemetry:
  metrics:
    exporter: otlp
    addr: 127.0.0.1:9464
    method_names: true
log:
  format: json
  level: debug
`
	cfg, err := Parse([]byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Metrics{Exporter: "otlp", Addr: "127.0.0.1:9464", MethodNames: true}, cfg.Telemetry.Metrics); diff != "" {
		t.Errorf("Metrics (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Log{Format: "json", Level: "debug"}, cfg.Log); diff != "" {
		t.Errorf("Log (-want +got):\n%s", diff)
	}
}

func TestParseTelemetryErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"telemetry:\n  metrics:\n    exporter: prometheus2\n", `3:15: telemetry.metrics.exporter: must be one of prometheus, otlp, none; got "prometheus2"`},
		{"telemetry:\n  metrics:\n    addr: 9464\n", `telemetry.metrics.addr: expected host:port such as "127.0.0.1:9464"`},
		{"telemetry:\n  metrics:\n    method_name: true\n", `telemetry.metrics.method_name: unknown key (did you mean "method_names"?)`},
		{"log:\n  format: xml\n", `log.format: must be one of text, json; got "xml"`},
		{"log:\n  level: trace\n", `log.level: must be one of debug, info, warn, error; got "trace"`},
	} {
		_, err := Parse([]byte(tc.src), "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tc.src, err, tc.want)
		}
	}
}

func TestMetricsExporters(t *testing.T) {
	env := func(v string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			if k == EnvMetricsExporter && v != "-" {
				return v, true
			}
			return "", false
		}
	}
	for _, tc := range []struct {
		m          Metrics
		env        string // "-": unset
		prom, otlp bool
	}{
		{Metrics{}, "-", false, false},
		{Metrics{}, "otlp", false, true},
		{Metrics{}, "prometheus, otlp", true, true},
		{Metrics{}, "none", false, false},
		{Metrics{Exporter: "none"}, "otlp", false, false}, // the file wins
		{Metrics{Exporter: "prometheus"}, "-", true, false},
		{Metrics{Exporter: "otlp", Addr: "127.0.0.1:9464"}, "-", true, true},
		{Metrics{Addr: "127.0.0.1:9464"}, "-", true, false},
	} {
		prom, otlp, err := tc.m.Exporters(env(tc.env))
		if err != nil || prom != tc.prom || otlp != tc.otlp {
			t.Errorf("%+v with %s=%q: got prometheus=%v otlp=%v err=%v, want %v %v", tc.m, EnvMetricsExporter, tc.env, prom, otlp, err, tc.prom, tc.otlp)
		}
	}
	if _, _, err := (Metrics{}).Exporters(env("zipkin")); err == nil || !strings.Contains(err.Error(), `OTEL_METRICS_EXPORTER="zipkin"`) {
		t.Errorf("an unknown exporter in the environment: %v", err)
	}
}
