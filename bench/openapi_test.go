package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// thingsDocument is the OpenAPI document of thingsServer.
const thingsDocument = `openapi: 3.0.3
info: { title: Things, version: "1" }
paths:
  /things/{id}:
    get:
      operationId: things/get
      parameters:
        - { name: id, in: path, required: true, schema: { type: integer } }
        - { name: fields, in: query, schema: { type: array, items: { type: string } } }
      responses:
        "200":
          description: A thing.
          content:
            application/json:
              schema:
                type: object
                required: [id, name]
                properties: { id: { type: integer }, name: { type: string }, tags: { type: array, items: { type: string } } }
`

// thingsServer starts bench/internal/thingsapi, answering GET
// /things/{id} after delay, and returns its base URL; a cleanup stops it.
func thingsServer(b testing.TB, delay time.Duration) string {
	b.Helper()
	cmd := exec.Command(fixture.Build(b, "./bench/internal/thingsapi"), "-delay", delay.String())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("thingsapi did not start: %v", err)
	}
	return "http://" + strings.TrimSpace(addr)
}

// BenchmarkOpenAPIGet is issue 10's per-call figure: one GET of a local
// API (a process of its own, bench/internal/thingsapi) made directly with
// net/http by this process (via=direct: a keep-alive client, the body read
// and decoded as JSON), and made by a program inside codemode-mcp through
// an OpenAPI connector (via=codemode: callsPerProgram sequential awaits
// per program, each validated, logged and decoded). The API answers at
// once (api=instant) or after 1 ms of work (api=1ms, a realistic
// downstream); the difference of the two vias is what codemode adds.
func BenchmarkOpenAPIGet(b *testing.B) {
	for _, iso := range isolations {
		b.Run("isolation="+iso, func(b *testing.B) {
			for _, delay := range []time.Duration{0, time.Millisecond} {
				name := "api=instant"
				if delay > 0 {
					name = "api=" + delay.String()
				}
				b.Run(name, func(b *testing.B) {
					api := thingsServer(b, delay)
					cm := startPeer(b, serverEnv(), codemodeBinary(b), "serve", "--config", thingsConfig(b, api, iso))
					ctx := context.Background()
					if err := programGets(ctx, cm, 10); err != nil {
						b.Fatal(err)
					}
					b.Run("via=direct", func(b *testing.B) {
						tr := http.DefaultTransport.(*http.Transport).Clone()
						defer tr.CloseIdleConnections()
						client := &http.Client{Transport: tr}
						for b.Loop() {
							if err := directGet(client, api+"/things/1?fields=name&fields=tags"); err != nil {
								b.Fatal(err)
							}
						}
					})
					b.Run("via=codemode", func(b *testing.B) {
						b.ResetTimer()
						for done := 0; done < b.N; {
							n := min(callsPerProgram, b.N-done)
							if err := programGets(ctx, cm, n); err != nil {
								b.Fatal(err)
							}
							done += n
						}
					})
				})
			}
		})
	}
}

// directGet makes one GET and decodes its JSON body.
func directGet(client *http.Client, url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var v map[string]any
	return json.Unmarshal(body, &v)
}

// programGets runs a program making n sequential GETs through the OpenAPI
// connector and checks what they returned.
func programGets(ctx context.Context, p *peer, n int) error {
	code := fmt.Sprintf(`async () => { let s = 0; for (let i = 0; i < %d; i++) s += (await api.things_get({ id: 1, fields: ["name", "tags"] })).name.length; return s }`, n)
	res, err := p.run(ctx, code)
	if err != nil {
		return err
	}
	if want := strconv.Itoa(len("thing one") * n); string(res) != want {
		return fmt.Errorf("%d GETs returned %s, want %s", n, res, want)
	}
	return nil
}

// thingsConfig writes a configuration whose connector api is thingsDocument
// served at base.
func thingsConfig(b testing.TB, base, iso string) string {
	b.Helper()
	dir := b.TempDir()
	doc := filepath.Join(dir, "things.yaml")
	if err := os.WriteFile(doc, []byte(thingsDocument), 0o600); err != nil {
		b.Fatal(err)
	}
	cfg := fmt.Sprintf(`store:
  path: %s
  cache_dir: %s
sandbox:
  isolation: %s
approvals:
  elicitation: false
connectors:
  api:
    openapi: %s
    base_url: %s
`, strconv.Quote(filepath.Join(dir, "codemode.db")), strconv.Quote(filepath.Join(dir, "cache")), iso, strconv.Quote(doc), strconv.Quote(base))
	path := filepath.Join(dir, "codemode.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

func githubDocument(b *testing.B) string { return fixture.GitHubDocument(b) }

// BenchmarkOpenAPIStartToolsList is issue 10's start-up figure: the time
// from starting `codemode-mcp serve` with GitHub's document configured to
// its answer to tools/list (initialize included), with an empty cache
// (cache=cold: read, parse and derive the document) and with the cache of
// a previous start (cache=warm). One op is one server started and stopped.
func BenchmarkOpenAPIStartToolsList(b *testing.B) {
	doc := githubDocument(b)
	for _, warm := range []bool{false, true} {
		name := "cache=cold"
		if warm {
			name = "cache=warm"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			cfg := filepath.Join(dir, "codemode.yaml")
			cache := filepath.Join(dir, "cache")
			body := fmt.Sprintf("store:\n  path: %s\n  cache_dir: %s\nconnectors:\n  github:\n    openapi: %s\n",
				strconv.Quote(filepath.Join(dir, "codemode.db")), strconv.Quote(cache), strconv.Quote(doc))
			if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
				b.Fatal(err)
			}
			bin := codemodeBinary(b)
			for b.Loop() {
				b.StopTimer()
				if !warm {
					if err := os.RemoveAll(cache); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				p := startPeer(b, nil, bin, "serve", "--config", cfg)
				res, err := p.client.ListTools(context.Background(), mcp.ListToolsRequest{})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if len(res.Tools) == 0 {
					b.Fatal("no tools")
				}
				if err := p.client.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
