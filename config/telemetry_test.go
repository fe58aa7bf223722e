package config

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTelemetry(t *testing.T) {
	t.Setenv("OTLP_KEY", "k-from-env-123")
	src := `telemetry:
  service_name: gateway-eu
  traces:
    exporter: otlp
    endpoint: https://collector.example:4318/v1/traces
    protocol: http/protobuf
    headers:
      x-api-key: literal-key-456
      authorization: Bearer ${OTLP_KEY}
    sample: 0.25
`
	cfg, err := Parse([]byte(src), "codemode.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ratio := 0.25
	want := Telemetry{ServiceName: "gateway-eu", Traces: Traces{
		Exporter: "otlp", Endpoint: "https://collector.example:4318/v1/traces", Protocol: "http/protobuf",
		Headers: map[string]string{"x-api-key": "literal-key-456", "authorization": "Bearer k-from-env-123"},
		Sample:  &ratio,
	}}
	if diff := cmp.Diff(want, cfg.Telemetry); diff != "" {
		t.Errorf("telemetry (-want +got):\n%s", diff)
	}
	// Header values are secrets, whether written in the file or taken
	// from the environment.
	secrets := cfg.Secrets()
	for _, s := range []string{"literal-key-456", "Bearer k-from-env-123", "k-from-env-123"} {
		if !slices.Contains(secrets, s) {
			t.Errorf("Secrets() lacks %q: %q", s, secrets)
		}
	}

	// Unset, every field leaves the environment in charge.
	cfg, err = Parse([]byte("telemetry: {}\n"), "codemode.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Telemetry{}, cfg.Telemetry); diff != "" {
		t.Errorf("empty telemetry (-want +got):\n%s", diff)
	}
}

func TestTelemetryErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"unknown key", "telemetry:\n  trace:\n    exporter: otlp\n",
			`codemode.yaml:2:3: telemetry.trace: unknown key (did you mean "traces"?)`},
		{"bad exporter", "telemetry:\n  traces:\n    exporter: jaeger\n",
			`codemode.yaml:3:15: telemetry.traces.exporter: must be one of otlp, none; got "jaeger"`},
		{"bad protocol", "telemetry:\n  traces:\n    protocol: http/json\n",
			`codemode.yaml:3:15: telemetry.traces.protocol: must be one of grpc, http/protobuf; got "http/json"`},
		{"bad endpoint", "telemetry:\n  traces:\n    endpoint: collector:4317\n",
			`codemode.yaml:3:15: telemetry.traces.endpoint: expected an http(s) URL such as "https://example.com/mcp", got "collector:4317"`},
		{"ratio too large", "telemetry:\n  traces:\n    sample: 2\n",
			`codemode.yaml:3:13: telemetry.traces.sample: expected a number from 0 to 1, got "2"`},
		{"ratio not a number", "telemetry:\n  traces:\n    sample: all\n",
			`codemode.yaml:3:13: telemetry.traces.sample: expected a number from 0 to 1, got "all"`},
		{"empty service name", "telemetry:\n  service_name: \"\"\n",
			`codemode.yaml:2:17: telemetry.service_name: must not be empty`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), "codemode.yaml")
			if err == nil {
				t.Fatalf("Parse accepted %q", tt.src)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n got %s\nwant %s", err, tt.want)
			}
		})
	}
}
