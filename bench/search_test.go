package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkSearchProgram is issue 12's search figure: one op is one
// program that makes 50 codemode.search calls (the first 50 queries of
// e2e/search/tuning.json) against GitHub's document (1,225 methods) and
// notes, sent to `codemode-mcp serve` as a codemode tool call. The index
// is built by a first program before timing. ms/query is the op's time
// over 50; it includes each search's trip from the program to the host
// (over the worker pipe with process isolation) and back.
func BenchmarkSearchProgram(b *testing.B) {
	doc := githubDocument(b)
	raw, err := os.ReadFile(filepath.Join("..", "e2e", "search", "tuning.json"))
	if err != nil {
		b.Fatal(err)
	}
	var set struct {
		Intents []struct {
			Query string `json:"query"`
		} `json:"intents"`
	}
	if err := json.Unmarshal(raw, &set); err != nil || len(set.Intents) < 50 {
		b.Fatalf("tuning.json: %v (%d queries)", err, len(set.Intents))
	}
	queries := make([]string, 50)
	for i := range queries {
		queries[i] = set.Intents[i].Query
	}
	q, _ := json.Marshal(queries)
	code := fmt.Sprintf(`async () => {
		let n = 0;
		for (const q of %s) n += (await codemode.search(q)).results.length;
		return n;
	}`, q)
	for _, iso := range isolations {
		b.Run("isolation="+iso, func(b *testing.B) {
			dir := b.TempDir()
			cfg := filepath.Join(dir, "codemode.yaml")
			body := fmt.Sprintf("store:\n  path: %s\n  cache_dir: %s\nsandbox:\n  isolation: %s\napprovals:\n  elicitation: false\nconnectors:\n  notes:\n    builtin: notes\n  github:\n    openapi: %s\n",
				strconv.Quote(filepath.Join(dir, "codemode.db")), strconv.Quote(filepath.Join(dir, "cache")), iso, strconv.Quote(doc))
			if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
				b.Fatal(err)
			}
			cm := startPeer(b, serverEnv(), codemodeBinary(b), "serve", "--config", cfg)
			ctx := context.Background()
			if _, err := cm.run(ctx, code); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := cm.run(ctx, code); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N)/50, "ms/query")
		})
	}
}
