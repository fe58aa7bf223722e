package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/codemode-mcp/codemode-mcp/internal/cli"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// servingMetrics matches serve's "serving metrics" line, with the URL of
// the metrics listener.
var servingMetrics = regexp.MustCompile(`msg="serving metrics" url=(\S+)`)

// mcpClient connects mcp-go's client to serve's streamable HTTP endpoint
// with the bearer token.
func mcpClient(t *testing.T, addr, token string) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP("http://"+addr+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = "2025-11-25"
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c
}

// callTool calls a tool and returns its text.
func callTool(t *testing.T, c *client.Client, tool string, args map[string]any) string {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// scrape gets url with the token (none when empty) and parses the
// Prometheus text it answers.
func scrape(t *testing.T, url, token string) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("the metrics do not parse: %v\n%s", err, body)
	}
	return fams
}

// sample sums the series of family name whose labels include want: a
// counter's or gauge's value, a histogram's count.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	var sum float64
	found := false
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum, found
}

// metricsConfig writes a configuration with the fixture MCP server as
// connector fx and the given telemetry section.
func metricsConfig(t *testing.T, token, telemetry string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "codemode.yaml")
	body := "server:\n  auth_token: " + token + "\nstore:\n  path: ./c.db\napprovals:\n  elicitation: false\n" +
		"connectors:\n  fx:\n    command: " + fixture.MCPServer(t) + "\n" + telemetry
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

var execID = regexp.MustCompile(`exec_[A-Za-z0-9_-]+`)

// Runs through the HTTP transport move the metrics served at /metrics
// behind the bearer token and on the --metrics-addr listener without it:
// runs by status, calls per connector, a paused run and the wait for its
// approval, store writes, the sandbox's workers.
func TestServeMetrics(t *testing.T) {
	const token = "metrics-token-5b1d"
	t.Setenv("CODEMODE_TOKEN", "")
	t.Setenv("OTEL_METRICS_EXPORTER", "")
	cfg := metricsConfig(t, token, "telemetry:\n  metrics:\n    exporter: prometheus\n")
	s := startServeLogging(t, []*regexp.Regexp{servingMCP, servingMetrics}, "--config", cfg, "--metrics-addr", "127.0.0.1:0")
	metricsURL := "http://" + s.addr + "/metrics"
	listenerURL := s.found[servingMetrics][1]

	c := mcpClient(t, s.addr, token)
	const runs = 3
	for i := range runs {
		out := callTool(t, c, "codemode", map[string]any{"code": fmt.Sprintf(`async () => { await fx.echo({message: "a%d"}); return await fx.echo({message: "b%d"}) }`, i, i)})
		if !strings.Contains(out, `"completed"`) {
			t.Fatalf("run %d: %s", i, out)
		}
	}
	if out := callTool(t, c, "codemode", map[string]any{"code": `async () => { await fx.fail({reason: "no"}) }`}); !strings.Contains(out, `"error"`) {
		t.Fatalf("a failing run: %s", out)
	}
	paused := callTool(t, c, "codemode", map[string]any{"code": `async () => await fx.delete_thing({id: "x"})`})
	id := execID.FindString(paused)
	if !strings.Contains(paused, `"paused"`) || id == "" {
		t.Fatalf("a run that needs approval: %s", paused)
	}

	for _, url := range []string{metricsURL, listenerURL} {
		fams := scrape(t, url, token)
		if v, _ := sample(fams, "codemode_approvals_pending", nil); v != 1 {
			t.Errorf("%s: codemode_approvals_pending = %v, want 1", url, v)
		}
	}
	if out := callTool(t, c, "codemode_approve", map[string]any{"executionId": id}); !strings.Contains(out, `"completed"`) {
		t.Fatalf("approve: %s", out)
	}

	fams := scrape(t, metricsURL, token)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64 // -1: more than 0
	}{
		{"codemode_runs_total", map[string]string{"status": "completed"}, runs + 1},
		{"codemode_runs_total", map[string]string{"status": "error"}, 1},
		{"codemode_run_duration_seconds", map[string]string{"status": "completed"}, runs + 1},
		{"codemode_call_duration_seconds", map[string]string{"connector": "fx", "outcome": "ok"}, 2*runs + 1},
		{"codemode_call_duration_seconds", map[string]string{"connector": "fx", "outcome": "error"}, 1},
		{"codemode_approval_wait_seconds", map[string]string{"decision": "approved"}, 1},
		{"codemode_approvals_pending", nil, 0},
		{"codemode_store_write_duration_seconds", map[string]string{"op": "create_execution", "outcome": "ok"}, runs + 2},
		{"codemode_store_write_duration_seconds", map[string]string{"outcome": "ok"}, -1},
		// The approved call was written ahead to SQLite's journal: the
		// metered store kept the capability.
		{"codemode_store_write_duration_seconds", map[string]string{"op": "journal", "outcome": "ok"}, -1},
		{"codemode_sandbox_workers", map[string]string{"state": "idle"}, -1},
		{"codemode_sandbox_worker_restarts_total", nil, 0},
		{"codemode_downstream_restarts_total", nil, -2}, // none yet: no series
	} {
		v, found := sample(fams, tc.name, tc.labels)
		switch {
		case tc.want == -2:
			if found {
				t.Errorf("%s%v = %v, want no series", tc.name, tc.labels, v)
			}
		case !found:
			t.Errorf("%s%v: no series", tc.name, tc.labels)
		case tc.want == -1 && v <= 0, tc.want >= 0 && v != tc.want:
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, v, tc.want)
		}
	}
	// Without method_names, no series has a method.
	for _, m := range fams["codemode_call_duration_seconds"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "method" {
				t.Errorf("a call series has method %q without method_names", l.GetValue())
			}
		}
	}

	for _, tc := range []struct {
		what, url, token string
		want             int
	}{
		{"/metrics without the token", metricsURL, "", http.StatusUnauthorized},
		{"/metrics with another token", metricsURL, "not-" + token, http.StatusUnauthorized},
		{"the metrics listener without a token", listenerURL, "", http.StatusOK},
		{"the metrics listener elsewhere", strings.TrimSuffix(listenerURL, "/metrics") + "/mcp", "", http.StatusNotFound},
	} {
		if got := status(t, "GET", tc.url, tc.token, ""); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.what, got, tc.want)
		}
	}
	if got := status(t, "POST", metricsURL, token, "{}"); got != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %d, want 405", got)
	}
	if code, logged := s.stop(); code != 0 {
		t.Errorf("serve exited %d:\n%s", code, logged)
	}
}

// With metrics off (the default), /metrics is no endpoint of its own (the
// console has it as any other path), and nothing listens for metrics.
func TestServeWithoutMetrics(t *testing.T) {
	const token = "metrics-token-off"
	t.Setenv("CODEMODE_TOKEN", "")
	t.Setenv("OTEL_METRICS_EXPORTER", "")
	s := startServe(t, "--config", metricsConfig(t, token, ""))
	req, err := http.NewRequest("GET", "http://"+s.addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(body), "codemode_") || strings.Contains(string(body), "# TYPE") {
		t.Errorf("GET /metrics with metrics off served metrics: %d %s", resp.StatusCode, body)
	}
	if _, logged := s.stop(); strings.Contains(logged, "serving metrics") {
		t.Errorf("metrics were served:\n%s", logged)
	}
}

// method_names labels call durations with the method too.
func TestServeMetricsMethodNames(t *testing.T) {
	const token = "metrics-token-methods"
	t.Setenv("CODEMODE_TOKEN", "")
	t.Setenv("OTEL_METRICS_EXPORTER", "")
	cfg := metricsConfig(t, token, "telemetry:\n  metrics:\n    exporter: prometheus\n    method_names: true\n")
	s := startServe(t, "--config", cfg)
	c := mcpClient(t, s.addr, token)
	callTool(t, c, "codemode", map[string]any{"code": `async () => await fx.echo({message: "m"})`})
	fams := scrape(t, "http://"+s.addr+"/metrics", token)
	if v, _ := sample(fams, "codemode_call_duration_seconds", map[string]string{"connector": "fx", "method": "echo"}); v != 1 {
		t.Errorf("calls of fx.echo = %v, want 1", v)
	}
}

// servingMCPJSON matches serve's "serving MCP" line in JSON, with its
// address.
var servingMCPJSON = regexp.MustCompile(`"msg":"serving MCP".*"addr":"([^"]+)"`)

// log.format: json makes every line serve logs a JSON object, and the
// secrets of the configuration are scrubbed from them as from text lines.
func TestServeLogsJSON(t *testing.T) {
	const token = "json-token-77e1"
	const secret = "tok-9f3b2c41d7e6"
	t.Setenv("CODEMODE_TOKEN", "")
	t.Setenv("CODEMODE_LOG_FORMAT", "")
	t.Setenv("CODEMODE_LOG_LEVEL", "")
	t.Setenv("BROKEN_TOKEN", secret)
	cfg := metricsConfig(t, token, "  broken:\n    url: http://127.0.0.1:1/${BROKEN_TOKEN}/mcp\nlog:\n  format: json\n")
	s := startServeLogging(t, []*regexp.Regexp{servingMCPJSON}, "--config", cfg)
	c := mcpClient(t, s.addr, token)
	callTool(t, c, "codemode", map[string]any{"code": `async () => await broken.anything({})`})
	code, logged := s.stop()
	if code != 0 {
		t.Errorf("serve exited %d", code)
	}
	n := 0
	for line := range strings.Lines(logged) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("a line is not JSON: %v: %s", err, line)
			continue
		}
		if rec["msg"] == nil || rec["level"] == nil || rec["time"] == nil {
			t.Errorf("a line without msg, level or time: %s", line)
		}
		n++
	}
	if n < 2 {
		t.Errorf("%d JSON lines:\n%s", n, logged)
	}
	if !strings.Contains(logged, "broken") {
		t.Errorf("nothing logged about the broken connector:\n%s", logged)
	}
	if strings.Contains(logged, secret) {
		t.Errorf("the log shows the secret:\n%s", logged)
	}
	if !strings.Contains(logged, "127.0.0.1:1/") {
		t.Errorf("no line names the broken connector's URL (whose secret is scrubbed):\n%s", logged)
	}
	if !strings.Contains(logged, `"delay":"`) {
		t.Errorf("durations are not written as text:\n%s", logged)
	}
}

// A --metrics-addr that is no host:port, and an unknown exporter in the
// environment, are usage errors that say what was wrong.
func TestServeMetricsUsageErrors(t *testing.T) {
	t.Setenv("CODEMODE_TOKEN", "")
	t.Setenv("CODEMODE_CONFIG", "")
	for _, tc := range []struct {
		env, flag, want string
	}{
		{"", "9464", `--metrics-addr: expected host:port such as "127.0.0.1:9464", got "9464"`},
		{"zipkin", "", `OTEL_METRICS_EXPORTER="zipkin": want prometheus, otlp or none`},
	} {
		t.Setenv("OTEL_METRICS_EXPORTER", tc.env)
		args := []string{"serve", "--transport", "http", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "c.db")}
		if tc.flag != "" {
			args = append(args, "--metrics-addr", tc.flag)
		}
		var stderr strings.Builder
		code := cli.Main(context.Background(), args, cli.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr})
		if code != cli.ExitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("serve %v with %s=%q: exit %d, %s; want exit 2 saying %s", args, "OTEL_METRICS_EXPORTER", tc.env, code, stderr.String(), tc.want)
		}
	}
}
