package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors/openapi"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/runtime"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/source"
)

// intent is one query of a search query set (e2e/search/*.json) with the
// paths that answer it.
type intent struct {
	Query string   `json:"query"`
	Want  []string `json:"want"`
}

func loadIntents(b *testing.B, name string) []intent {
	b.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "e2e", "search", name))
	if err != nil {
		b.Fatal(err)
	}
	var set struct {
		Intents []intent `json:"intents"`
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return set.Intents
}

// githubEnv is an env with GitHub's document (as connector github) and
// notes, and s's other settings.
func githubEnv(b *testing.B, s setup) *env {
	b.Helper()
	gh, err := openapi.New(context.Background(), openapi.Config{Name: "github", Document: fixture.GitHubDocument(b)})
	if err != nil {
		b.Fatal(err)
	}
	s.noKV, s.notes, s.extra = true, true, append(s.extra, runtime.Source{Connector: gh})
	return newEnv(b, s)
}

// BenchmarkSearchGitHub measures codemode.search over GitHub's document
// (1,200+ methods) and the notes connector: one op is one Search of a
// plain-language query, cycling through the tuning set (e2e/search/
// tuning.json). It reports the recall of that set (top1 and top5, in %,
// over the queries whose answers are configured here: GitHub's and
// notes'), and with CODEMODE_SEARCH_HELDBACK=1 the held-back set's too.
// CODEMODE_SEARCH_VERBOSE=1 logs the queries whose answer is not first.
// The first search builds the index: index-build is that time alone.
func BenchmarkSearchGitHub(b *testing.B) {
	ctx := context.Background()
	e := githubEnv(b, setup{})
	search := func(q string) []string {
		raw, err := e.rt.Search(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		var h hits
		if err := json.Unmarshal(raw, &h); err != nil {
			b.Fatal(err)
		}
		paths := make([]string, len(h.Results))
		for i, r := range h.Results {
			paths[i] = r.Path
		}
		return paths
	}
	b.Run("index-build", func(b *testing.B) {
		for range b.N {
			runtime.ResetSearchIndex(e.rt)
			search("x")
		}
	})
	sets := []string{"tuning.json"}
	if os.Getenv("CODEMODE_SEARCH_HELDBACK") == "1" {
		sets = append(sets, "heldback.json", "heldback2.json", "heldback3.json", "heldback4.json", "heldback5.json", "heldback6.json", "heldback7.json", "heldback8.json", "heldback9.json")
	}
	var queries []string
	for _, name := range sets {
		var n, top1, top5 int
		for _, in := range loadIntents(b, name) {
			if !runtime.HasPath(e.rt, in.Want[0]) {
				continue
			}
			n++
			got := search(in.Query)
			queries = append(queries, in.Query)
			rank := -1
			for i, p := range got {
				for _, w := range in.Want {
					if p == w && rank < 0 {
						rank = i
					}
				}
			}
			if rank == 0 {
				top1++
			}
			if rank >= 0 && rank < 5 {
				top5++
			}
			if rank != 0 && os.Getenv("CODEMODE_SEARCH_VERBOSE") == "1" {
				b.Logf("%s: %q: want %v at rank %d; got %v", name, in.Query, in.Want, rank, got[:min(5, len(got))])
			}
		}
		set := name[:len(name)-len(".json")]
		b.Logf("%s: %d queries, top-1 %d (%.0f%%), top-5 %d (%.0f%%)", set, n, top1, pct(top1, n), top5, pct(top5, n))
		b.Run(set, func(b *testing.B) {
			for range b.N {
				search(queries[0])
			}
			b.ReportMetric(pct(top1, n), "top1-%")
			b.ReportMetric(pct(top5, n), "top5-%")
		})
	}
	b.Run("query", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			search(queries[i%len(queries)])
		}
	})
}

func pct(k, n int) float64 {
	if n == 0 {
		return 0
	}
	return 100 * float64(k) / float64(n)
}

// BenchmarkCheckGitHub is the host's part of the check before running
// (Runtime's sandbox.Checker) for a typical program against GitHub's
// document: four static calls, three with object-literal arguments
// (constant, partly dynamic, and one with a misspelt property). The
// schemas are decoded on first use (the first op); sandbox's
// BenchmarkCollectStatic is the part that finds the calls.
func BenchmarkCheckGitHub(b *testing.B) {
	ctx := context.Background()
	e := githubEnv(b, setup{})
	calls, err := source.StaticCalls(`async () => {
		const repo = await github.repos_get({ owner: "golang", repo: "go" });
		const issues = await github.issues_list_for_repo({ owner: "golang", repo: repo.name, state: "open", per_page: 5 });
		await notes.createNote({ text: issues.map(i => i.title).join("\n") });
		return await github.issues_create({ owner: "golang", rep: "go", body: { title: "x", body: "y" } });
	}`)
	if err != nil {
		b.Fatal(err)
	}
	problems, err := runtime.Check(ctx, e.rt, calls)
	if err != nil || len(problems) != 2 || !strings.Contains(problems[1].Message, `"rep" not allowed; did you mean "repo"?`) {
		b.Fatalf("problems %v, %v; want the misspelt property", problems, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := runtime.Check(ctx, e.rt, calls); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkServicesInProgram measures codemode.search and
// codemode.describe called from a program: b.N calls in one program
// (cycling through eight queries, or eight paths), so one op is one
// answer with its host round trip and its log entry. Over GitHub's
// document (search, describe) an answer costs what it costs; over the
// small catalog of kv and notes (search-small) the rest shows. The index
// is built before the timer starts.
func BenchmarkServicesInProgram(b *testing.B) {
	for _, c := range []struct {
		name, fn, args string
		github         bool
	}{
		{"search", "search", `["list open issues", "merge a pull request", "create a release", "rerun failed jobs", "star a repository", "add a label", "list my notifications", "get a file's contents"]`, true},
		{"describe", "describe", `["github.issues_list_for_repo", "github.pulls_merge", "github.repos_create_release", "github.actions_re_run_workflow_failed_jobs", "github.activity_star_repo_for_authenticated_user", "github.issues_add_labels", "github.activity_list_notifications_for_authenticated_user", "github.repos_get_content"]`, true},
		{"search-small", "search", `["create a note", "delete a note", "list notes", "get a value", "put a value", "add", "search notes", "remove"]`, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := setup{limits: sandbox.Limits{MaxCalls: b.N + 10}}
			var e *env
			if c.github {
				e = githubEnv(b, s)
			} else {
				s.notes = true
				e = newEnv(b, s)
			}
			mustStatus(b, e.run(`async () => codemode.search("warm the index")`, nil), codemode.StatusCompleted)
			code := fmt.Sprintf(`async () => {
				const args = %s;
				let n = 0;
				for (let i = 0; i < %d; i++) n += JSON.stringify(await codemode.%s(args[i %% args.length])).length;
				return n;
			}`, c.args, b.N, c.fn)
			b.ResetTimer()
			o := e.run(code, nil)
			b.StopTimer()
			mustStatus(b, o, codemode.StatusCompleted)
		})
	}
}
