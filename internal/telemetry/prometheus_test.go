package telemetry_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/telemetry"
)

// prometheusTools returns the paths of Debian's prometheus and promtool;
// without them the test is skipped, or fails under CI (which installs
// them: .ci/run).
func prometheusTools(t *testing.T) (prom, promtool string) {
	t.Helper()
	prom, err1 := exec.LookPath("prometheus")
	promtool, err2 := exec.LookPath("promtool")
	if err1 != nil || err2 != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("prometheus and promtool are needed (apt-get install prometheus): %v %v", err1, err2)
		}
		t.Skipf("prometheus and promtool are not installed (apt-get install prometheus): %v %v", err1, err2)
	}
	return prom, promtool
}

// start runs cmd until the test ends, when it is interrupted (killed if
// it does not stop) and waited for. The lines of its stderr come on the
// channel (those nobody reads in time are dropped), which is closed when
// it exits.
func start(t *testing.T, cmd *exec.Cmd) <-chan string {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	lines := make(chan string, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = cmd.Wait()
	})
	return lines
}

// freePort is a loopback port nothing listens on now (for prometheus,
// which does not say which port it took for :0).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// query asks Prometheus's HTTP API for an instant vector's single value;
// ok is false while the answer has no sample (or NaN).
func query(t *testing.T, promAddr, q string) (float64, bool) {
	t.Helper()
	resp, err := http.Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, false // still starting
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable {
		return 0, false // its storage is not ready yet (a plain-text "Service Unavailable")
	}
	var body struct {
		Status string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
		Error string
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	if body.Status != "success" {
		t.Fatalf("query %s: %s", q, body.Error)
	}
	if len(body.Data.Result) != 1 {
		return 0, false
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// Acceptance, verified from outside: Prometheus (Debian's) scrapes
// /metrics of a real codemode-mcp serving HTTP, with its bearer token,
// every second; after a load of runs through the MCP endpoint, PromQL
// through Prometheus's HTTP API gives the number of completed runs and
// the p95 call duration, and promtool check metrics finds nothing to say
// about the text served.
func TestPrometheusScrapesServe(t *testing.T) {
	prom, promtool := prometheusTools(t)
	const token = "prom-token-1f8a3c"
	dir := t.TempDir()
	cfg := filepath.Join(dir, "codemode.yaml")
	body := "server:\n  auth_token: " + token + "\nstore:\n  path: ./c.db\n" +
		"connectors:\n  fx:\n    command: " + fixture.MCPServer(t) + "\n" +
		"telemetry:\n  metrics:\n    exporter: prometheus\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	serve := exec.Command(fixture.Codemode(t), "serve", "--config", cfg, "--transport", "http", "--addr", "127.0.0.1:0")
	serve.Env = append(os.Environ(), "CODEMODE_TOKEN=", "OTEL_METRICS_EXPORTER=", "CODEMODE_LOG_FORMAT=")
	var addr string
	for line := range start(t, serve) {
		if m := regexp.MustCompile(`msg="serving MCP".* addr=(\S+)`).FindStringSubmatch(line); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		t.Fatal("codemode-mcp did not start serving")
	}

	promAddr := freePort(t)
	promCfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(promCfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: codemode
    metrics_path: /metrics
    authorization:
      type: Bearer
      credentials: %s
    static_configs:
      - targets: [%q]
`, token, addr)), 0o600); err != nil {
		t.Fatal(err)
	}
	pcmd := exec.Command(prom, "--config.file="+promCfg, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	start(t, pcmd)

	// The load: runs of three calls each.
	tr, err := transport.NewStreamableHTTP("http://"+addr+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	defer c.Close()
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
	const runs = 20
	for i := range runs {
		req := mcp.CallToolRequest{}
		req.Params.Name = "codemode"
		req.Params.Arguments = map[string]any{"code": fmt.Sprintf(`async () => { for (const m of ["a", "b", "c"]) await fx.echo({message: m + %d}); return %d }`, i, i)}
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			t.Fatalf("run %d: %v %v", i, err, res)
		}
	}

	// What Prometheus scraped: it scrapes every second; wait for it to
	// have seen the last run.
	const completed = `sum(codemode_runs_total{job="codemode",status="completed"})`
	// (Over the buckets as they stand: every call since the server
	// started. A dashboard takes rate(…[5m]) of them instead, which needs
	// calls spread over several scrapes.)
	const p95 = `histogram_quantile(0.95, sum by (le) (codemode_call_duration_seconds_bucket{job="codemode",connector="fx"}))`
	const calls = `sum(codemode_call_duration_seconds_count{job="codemode",connector="fx"})`
	var n, q, made float64
	var okN, okQ bool
	fixture.Until(t, "Prometheus has scraped the last run", func() bool {
		n, okN = query(t, promAddr, completed)
		q, okQ = query(t, promAddr, p95)
		made, _ = query(t, promAddr, calls)
		if okN && n == runs && okQ {
			return true
		}
		time.Sleep(500 * time.Millisecond) // polling another process's scrapes, which come once a second
		return false
	})
	if !okN || n != runs {
		t.Errorf("%s = %v (%v), want %d", completed, n, okN, runs)
	}
	if !okQ || q <= 0 || q > 60 {
		t.Errorf("p95 call duration = %v (%v), want a duration in seconds", q, okQ)
	}
	if made != 3*runs {
		t.Errorf("%s = %v, want %d", calls, made, 3*runs)
	}
	t.Logf("Prometheus: %d completed runs, p95 call duration %.4fs over %v calls", int(n), q, made)

	// promtool check metrics reads the text served and reports nothing.
	req, err := http.NewRequest("GET", "http://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(string(text))
	out, err := check.CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// Label values come from programs and downstreams (method names with
// method_names on): text that would break the exposition format (a
// newline, a quote, a backslash, a line that looks like a sample) is
// escaped, and names past the SDK's cardinality limit fold into one
// overflow series instead of growing the answer without bound. promtool
// check metrics reads what is served and finds nothing to say.
func TestPrometheusHostileLabels(t *testing.T) {
	_, promtool := prometheusTools(t)
	ctx := context.Background()
	m, err := telemetry.NewMetrics(ctx, telemetry.MetricsOptions{Prometheus: true, MethodNames: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(ctx)
	hostile := []string{"a\nb", `q"uote`, `back\slash`, "nul\x00x", "} 1\ncodemode_fake 9", "# HELP codemode_fake x"}
	for _, name := range hostile {
		m.CallDone(ctx, "fx", name, telemetry.OutcomeOK, time.Millisecond)
	}
	const distinct = 3000 // past the SDK's limit of 2,000 series per instrument
	for i := range distinct {
		m.CallDone(ctx, "fx", fmt.Sprint("m", i), telemetry.OutcomeOK, time.Millisecond)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	got := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d\n%.2000s", rec.Code, got)
	}
	for _, want := range []string{`method="a\nb"`, `method="q\"uote"`, `method="back\\slash"`, `method="} 1\ncodemode_fake 9"`, `otel_metric_overflow="true"`} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s in the exposition", want)
		}
	}
	if strings.Contains(got, "\ncodemode_fake") || strings.Contains(got, "\n# HELP codemode_fake") {
		t.Error("a method name made a line of its own in the exposition")
	}
	if n := strings.Count(got, "codemode_call_duration_seconds_count{"); n > 2000 {
		t.Errorf("%d call series for %d method names, want at most 2,000", n, distinct+len(hostile))
	}
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(got)
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
