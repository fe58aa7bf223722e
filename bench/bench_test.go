package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	mcpconn "github.com/codemode-mcp/codemode-mcp/connectors/mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// isolations are the sandbox.isolation settings every end-to-end benchmark
// is measured with.
var isolations = []string{"inprocess", "process"}

// callsPerProgram is how many downstream calls one program makes in
// BenchmarkDownstreamCall, so that the per-run overhead (measured alone by
// BenchmarkTrivialRunE2E) is amortised.
const callsPerProgram = 1000

// sumArgs are the arguments of every get-sum call; its result is 3.
var sumArgs = map[string]any{"a": 1, "b": 2}

// BenchmarkDownstreamCall is issue 4's first ratio: one call of the fixture
// server's get-sum tool (annotated read-only), made by an MCP client
// directly over stdio (via=direct), and made by a program inside
// codemode-mcp, itself served over stdio, whose connector is the same
// fixture server (via=codemode). One op is one call; the codemode side
// makes its calls in programs of callsPerProgram sequential awaits, so its
// per-op time includes the durable log (executing, then applied, written
// in groups) and its share of the run overhead.
//
// via=wire is the floor of any client: the same request line written and
// the answer line read on one goroutine, decoding nothing (wireClient).
// via=connector is a breakdown, not a target: the same call through
// codemode-mcp's MCP connector (connectors/mcp) used as a library in this
// process, i.e. the downstream leg of via=codemode without the runtime,
// sandbox and log.
func BenchmarkDownstreamCall(b *testing.B) {
	for _, iso := range isolations {
		b.Run("isolation="+iso, func(b *testing.B) {
			direct, cm := startPair(b, iso)
			conn := startConnector(b)
			wire := startWire(b, fixture.MCPServer(b))
			b.Run("via=direct", each(func(ctx context.Context) error { return directSum(ctx, direct, "get-sum") }))
			b.Run("via=wire", each(wire.sum))
			b.Run("via=connector", func(b *testing.B) {
				ctx := context.Background()
				args := json.RawMessage(`{"a":1,"b":2}`)
				b.ResetTimer()
				for range b.N {
					res, err := conn.Call(ctx, "get-sum", args)
					if err != nil {
						b.Fatal(err)
					}
					if string(res.Value) != "3" || res.IsError {
						b.Fatalf("get-sum(1, 2) = %+v", res)
					}
				}
			})
			b.Run("via=codemode", programCalls("get_sum", cm))
		})
	}
}

// BenchmarkSideEffectCall is BenchmarkDownstreamCall for a call that is not
// known to be read-only: the fixture's record-sum (get-sum plus an
// in-memory tally, annotated readOnlyHint: false), answered at once
// (downstream=instant) or after 1 ms of the server's own work
// (downstream=1ms, a realistic downstream). Inside a program such a call
// is logged before it is sent (write-ahead): its entry is committed
// executing, with the results of the calls before it.
func BenchmarkSideEffectCall(b *testing.B) {
	for _, iso := range isolations {
		b.Run("isolation="+iso, func(b *testing.B) {
			direct, cm := startPair(b, iso)
			for _, ms := range []int{0, 1} {
				name, args := "downstream=instant", sumArgs
				if ms > 0 {
					name, args = fmt.Sprintf("downstream=%dms", ms), map[string]any{"a": 1, "b": 2, "ms": ms}
				}
				b.Run(name, func(b *testing.B) {
					b.Run("via=direct", each(func(ctx context.Context) error { return directSumWith(ctx, direct, "record-sum", args) }))
					b.Run("via=codemode", programCallsWith("record_sum", args, cm))
				})
			}
		})
	}
}

// BenchmarkDownstreamCallSlow is BenchmarkDownstreamCall against a
// realistic downstream: an MCP server that answers after 1 ms of work (the
// fixture's slow tool with {ms: 1}) rather than at once. It is what the
// fast paths of a call (docs/ARCHITECTURE.md) must pay for themselves on:
// a saving measured only against an instant fixture may be spent waiting
// on any real server.
func BenchmarkDownstreamCallSlow(b *testing.B) {
	for _, iso := range isolations {
		b.Run("isolation="+iso+"/server=1ms", func(b *testing.B) {
			direct, cm := startPair(b, iso)
			b.Run("via=direct", each(func(ctx context.Context) error {
				text, err := direct.text(ctx, "slow", map[string]any{"ms": 1})
				if err == nil && text != slowAnswer {
					err = fmt.Errorf("slow(1) = %q, want %q", text, slowAnswer)
				}
				return err
			}))
			b.Run("via=codemode", func(b *testing.B) {
				ctx := context.Background()
				b.ResetTimer()
				for done := 0; done < b.N; {
					n := min(callsPerProgram, b.N-done)
					code := fmt.Sprintf("async () => { let s = 0; for (let i = 0; i < %d; i++) s += (await fx.slow({ ms: 1 })).length; return s }", n)
					res, err := cm.run(ctx, code)
					if err != nil {
						b.Fatal(err)
					}
					if want := strconv.Itoa(len(slowAnswer) * n); string(res) != want {
						b.Fatalf("%d calls of slow(1) returned %s, want %s", n, res, want)
					}
					done += n
				}
			})
		})
	}
}

// slowAnswer is the fixture's slow tool's text for {ms: 1}.
const slowAnswer = "slept 1ms"

// programCalls is the via=codemode side of a per-call benchmark: programs
// of callsPerProgram sequential fx.<method>({a: 1, b: 2}) calls.
func programCalls(method string, cm *peer) func(*testing.B) {
	return programCallsWith(method, sumArgs, cm)
}

// programCallsWith is programCalls with args, {a: 1, b: 2} and more.
func programCallsWith(method string, args map[string]any, cm *peer) func(*testing.B) {
	return func(b *testing.B) {
		ctx := context.Background()
		b.ResetTimer()
		for done := 0; done < b.N; {
			n := min(callsPerProgram, b.N-done)
			if err := programSumWith(ctx, cm, method, args, n); err != nil {
				b.Fatal(err)
			}
			done += n
		}
	}
}

// BenchmarkTrivialRunE2E is issue 4's second ratio: a trivial direct
// tools/call of get-sum on the fixture server (via=direct) against a
// trivial program, `1 + 1`, run end to end through codemode-mcp's codemode
// tool (via=codemode): request decoding, a new execution record, a sandbox
// pass and the outcome, each over stdio.
func BenchmarkTrivialRunE2E(b *testing.B) {
	for _, iso := range isolations {
		b.Run("isolation="+iso, func(b *testing.B) {
			direct, cm := startPair(b, iso)
			b.Run("via=direct", each(func(ctx context.Context) error { return directSum(ctx, direct, "get-sum") }))
			b.Run("via=codemode", func(b *testing.B) {
				ctx := context.Background()
				b.ResetTimer()
				for range b.N {
					res, err := cm.run(ctx, "1 + 1")
					if err != nil {
						b.Fatal(err)
					}
					if string(res) != "2" {
						b.Fatalf("1 + 1 = %s", res)
					}
				}
			})
		})
	}
}

// each is a benchmark whose op is one call of op.
func each(op func(context.Context) error) func(*testing.B) {
	return func(b *testing.B) {
		ctx := context.Background()
		b.ResetTimer()
		for range b.N {
			if err := op(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// startPair starts the fixture server for direct calls and a codemode-mcp
// server (sandbox.isolation iso, a fresh database with synchronous NORMAL)
// whose connector fx is another instance of the fixture server; both are
// warmed up. With iso "process" it fails unless the server runs programs in
// worker processes, and with "inprocess" unless it does not.
func startPair(b *testing.B, iso string) (direct, cm *peer) {
	return startPairOn(b, iso, "")
}

// startPairOn is startPair with the log in store (a SQLite file or a
// PostgreSQL URL; "": a SQLite file in a temporary directory).
func startPairOn(b *testing.B, iso, store string) (direct, cm *peer) {
	b.Helper()
	fx := fixture.MCPServer(b)
	direct = startPeer(b, nil, fx)
	cm = startPeer(b, serverEnv(), codemodeBinary(b), "serve", "--config", writeConfig(b, fx, iso, store))

	ctx := context.Background()
	if err := directSum(ctx, direct, "get-sum"); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, callsPerProgram} {
		if err := programSum(ctx, cm, "get_sum", n); err != nil {
			b.Fatal(err)
		}
	}
	workers, err := cm.workers()
	if err != nil {
		b.Fatal(err)
	}
	switch {
	case iso == "process" && len(workers) == 0:
		b.Fatalf("sandbox.isolation is process but the server ran a program without any worker process (is the process pool wired in?)\nstderr:\n%s", cm.stderr)
	case iso == "inprocess" && len(workers) > 0:
		b.Fatalf("sandbox.isolation is inprocess but the server has worker processes %v", workers)
	}
	return direct, cm
}

// startConnector dials the fixture server with codemode-mcp's MCP
// connector; a cleanup closes it and waits for the server.
func startConnector(b *testing.B) *mcpconn.Connector {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	c, err := mcpconn.Open(ctx, mcpconn.Config{
		Name:    "fx",
		Command: fixture.MCPServer(b),
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err == nil {
		if _, err = c.Tools(ctx); err != nil { // it did not start
			c.Close()
		}
	}
	if err != nil {
		b.Fatalf("dial the fixture server: %v", err)
	}
	b.Cleanup(func() {
		if err := c.Close(); err != nil {
			b.Errorf("close connector: %v", err)
		}
	})
	return c
}

// writeConfig writes a codemode-mcp configuration with one connector, fx,
// the fixture server at fixturePath, and the log in store ("": a SQLite
// file in a temporary directory), and returns its path.
func writeConfig(b *testing.B, fixturePath, iso, store string) string {
	b.Helper()
	dir := b.TempDir()
	if store == "" {
		store = filepath.Join(dir, "codemode.db")
	}
	cfg := fmt.Sprintf(`store:
  path: %s
  synchronous: normal
sandbox:
  isolation: %s
approvals:
  elicitation: false
connectors:
  fx:
    command: %s
`, strconv.Quote(store), iso, strconv.Quote(fixturePath))
	path := filepath.Join(dir, "codemode.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// directSum calls tool (get-sum or record-sum) with {a: 1, b: 2} directly
// and checks its result.
func directSum(ctx context.Context, p *peer, tool string) error {
	return directSumWith(ctx, p, tool, sumArgs)
}

// directSumWith is directSum with args, {a: 1, b: 2} and more.
func directSumWith(ctx context.Context, p *peer, tool string, args map[string]any) error {
	text, err := p.text(ctx, tool, args)
	if err != nil {
		return err
	}
	if text != "3" {
		return fmt.Errorf("%s(1, 2) = %q", tool, text)
	}
	return nil
}

// programSum runs a program making n sequential fx.<method>({a: 1, b: 2})
// calls (get_sum or record_sum) and checks their total.
func programSum(ctx context.Context, p *peer, method string, n int) error {
	return programSumWith(ctx, p, method, sumArgs, n)
}

// programSumWith is programSum with args, {a: 1, b: 2} and more.
func programSumWith(ctx context.Context, p *peer, method string, args map[string]any, n int) error {
	js, err := json.Marshal(args)
	if err != nil {
		return err
	}
	code := fmt.Sprintf("async () => { let s = 0; for (let i = 0; i < %d; i++) s += await fx.%s(%s); return s }", n, method, js)
	res, err := p.run(ctx, code)
	if err != nil {
		return err
	}
	if want := strconv.Itoa(3 * n); string(res) != want {
		return fmt.Errorf("%d calls of %s(1, 2) returned %s, want %s", n, method, res, want)
	}
	return nil
}
