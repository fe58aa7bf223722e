package runtime_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/connectors/mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors/openapi"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/runtime"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/source"
)

// intent is one query of a search query set (e2e/search/*.json) with the
// paths that answer it, the first the intended one.
type intent struct {
	Query string   `json:"query"`
	Want  []string `json:"want"`
}

// querySet is one file of e2e/search: Words says whose words its queries
// are ("api", "model", "users"), Tuned whether the search's rules were
// chosen looking at its results.
type querySet struct {
	Name    string
	Words   string   `json:"words"`
	Tuned   bool     `json:"tuned"`
	Intents []intent `json:"intents"`
}

// loadQuerySets reads every query set of e2e/search: tuning first, then
// the held-back sets in the order they were written (heldback,
// heldback2, …, heldback10).
func loadQuerySets(tb testing.TB) []querySet {
	tb.Helper()
	dir := filepath.Join("..", "e2e", "search")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no query sets in %s (%v)", dir, err)
	}
	var sets []querySet
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		set := querySet{Name: strings.TrimSuffix(filepath.Base(f), ".json")}
		if err := json.Unmarshal(raw, &set); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		if set.Words == "" || len(set.Intents) == 0 {
			tb.Fatalf("%s: no words or no intents", f)
		}
		sets = append(sets, set)
	}
	order := func(name string) int {
		if name == "tuning" {
			return 0
		}
		n, err := strconv.Atoi(strings.TrimPrefix(name, "heldback"))
		if err != nil {
			return 1
		}
		return n
	}
	slices.SortFunc(sets, func(a, b querySet) int { return cmp.Compare(order(a.Name), order(b.Name)) })
	return sets
}

// recall counts a set's queries whose intended path (or one as good)
// comes first, in the first 5 and in the first 20 (all codemode.search
// gives).
type recall struct {
	n, top1, top5, top20 int
}

func (r *recall) add(rank int) {
	r.n++
	if rank == 0 {
		r.top1++
	}
	if rank >= 0 && rank < 5 {
		r.top5++
	}
	if rank >= 0 && rank < 20 {
		r.top20++
	}
}

func (r recall) plus(o recall) recall {
	return recall{r.n + o.n, r.top1 + o.top1, r.top5 + o.top5, r.top20 + o.top20}
}

func (r recall) String() string {
	return fmt.Sprintf("%3d  %3d %3.0f%%  %3d %3.0f%%  %3d %3.0f%%", r.n,
		r.top1, pct(r.top1, r.n), r.top5, pct(r.top5, r.n), r.top20, pct(r.top20, r.n))
}

// githubEnv is an env with GitHub's document (as connector github) and
// notes, and s's other settings.
func githubEnv(b *testing.B, s setup) *env {
	b.Helper()
	gh, err := openapi.New(context.Background(), openapi.Config{Name: "github", Document: fixture.GitHubDocument(b)})
	if err != nil {
		b.Fatal(err)
	}
	s.noKV, s.notes, s.extra = true, true, append(s.extra, catalog.Source{Connector: gh})
	return newEnv(b, s)
}

// searchEnv is githubEnv with server-everything and server-memory beside
// GitHub and notes, as the end-to-end suite configures them: every query
// set has queries for them. Their binaries are in e2e's node_modules,
// beside GitHub's document.
func searchEnv(b *testing.B) *env {
	b.Helper()
	doc := fixture.GitHubDocument(b)
	bin := filepath.Join(filepath.Dir(doc), "..", "..", "..", ".bin")
	var extra []catalog.Source
	for _, c := range []mcp.Config{
		{Name: "everything", Command: filepath.Join(bin, "mcp-server-everything")},
		{Name: "memory", Command: filepath.Join(bin, "mcp-server-memory"), Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(b.TempDir(), "memory.jsonl")}},
	} {
		c.Logger = slog.New(slog.DiscardHandler)
		conn, err := mcp.Open(context.Background(), c)
		if err == nil {
			if _, err = conn.Tools(context.Background()); err != nil { // it did not start
				conn.Close()
			}
		}
		if err != nil {
			b.Fatalf("%s (npm ci in e2e/): %v", c.Name, err)
		}
		b.Cleanup(func() {
			if err := conn.Close(); err != nil {
				b.Errorf("close %s: %v", c.Name, err)
			}
		})
		extra = append(extra, catalog.Source{Connector: conn})
	}
	return githubEnv(b, setup{extra: extra})
}

// BenchmarkSearchGitHub measures codemode.search over GitHub's document
// (1,200+ methods), server-everything, server-memory and the notes
// connector: one op of query is one Search
// of a plain-language query, cycling through every query set of
// e2e/search. Before it, it logs the recall of every set (top-1, top-5 and
// top-20), and the sums over the sets the search was not tuned on and
// over those in users' words; it reports the first two as metrics.
// CODEMODE_SEARCH_VERBOSE=1 logs the queries whose answer is not first.
// The first search builds the index: index-build is that time alone.
//
//	go test -run '^$' -bench SearchGitHub/recall -benchtime 1x -v ./runtime
func BenchmarkSearchGitHub(b *testing.B) {
	ctx := context.Background()
	e := searchEnv(b)
	search := func(q string) []string {
		raw, err := runtime.Search(ctx, e.rt, q)
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
	var queries []string
	var table strings.Builder
	var untuned, users recall
	fmt.Fprintf(&table, "recall of codemode.search (top-1, top-5, top-20):\n%-11s %-6s %-5s %s\n", "set", "words", "tuned", "  n  top-1      top-5      top-20")
	for _, set := range loadQuerySets(b) {
		var r recall
		for _, in := range set.Intents {
			if !runtime.HasPath(e.rt, in.Want[0]) {
				b.Fatalf("%s: %q wants %s, which is not configured", set.Name, in.Query, in.Want[0])
			}
			got := search(in.Query)
			queries = append(queries, in.Query)
			rank := slices.IndexFunc(got, func(p string) bool { return slices.Contains(in.Want, p) })
			r.add(rank)
			if rank != 0 && os.Getenv("CODEMODE_SEARCH_VERBOSE") == "1" {
				b.Logf("%s: %q: want %v at rank %d; got %v", set.Name, in.Query, in.Want, rank, got[:min(5, len(got))])
			}
		}
		if !set.Tuned {
			untuned = untuned.plus(r)
		}
		if set.Words == "users" {
			users = users.plus(r)
		}
		fmt.Fprintf(&table, "%-11s %-6s %-5v %s\n", set.Name, set.Words, set.Tuned, r)
	}
	fmt.Fprintf(&table, "%-24s %s\n%-24s %s", "not tuned on", untuned, "users' words", users)
	b.Log(table.String())
	b.Run("recall", func(b *testing.B) {
		for range b.N {
			search(queries[0])
		}
		b.ReportMetric(pct(untuned.top5, untuned.n), "untuned-top5-%")
		b.ReportMetric(pct(untuned.top20, untuned.n), "untuned-top20-%")
	})
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
	prog, err := source.Normalize(`async () => {
		const repo = await github.repos_get({ owner: "golang", repo: "go" });
		const issues = await github.issues_list_for_repo({ owner: "golang", repo: repo.name, state: "open", per_page: 5 });
		await notes.createNote({ text: issues.map(i => i.title).join("\n") });
		return await github.issues_create({ owner: "golang", rep: "go", body: { title: "x", body: "y" } });
	}`, source.ProgramFile)
	if err != nil {
		b.Fatal(err)
	}
	calls := prog.StaticCalls()
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
