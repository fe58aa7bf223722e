package source

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func staticOf(t *testing.T, code string) *staticInfo {
	t.Helper()
	n, err := Normalize(code, ProgramFile)
	if err != nil {
		t.Fatal(err)
	}
	return &n.static
}

// The static calls of a program are found in its syntax tree, located in
// the model's own source (TypeScript here), with what its literals say.
func TestCollectStatic(t *testing.T) {
	code := "```ts\n" + `async () => {
  const n: number = 2;
  await notes.createNote({ text: "hi", tags: ["a", n], n: -1.5, ok: true, none: null, ["k" + n]: 1 });
  await github.issues["list_for_repo"]?.({ owner, ...rest });
  const mine = { go: () => 1 };
  mine.go();
  JSON.stringify({});
}
` + "```"
	info := staticOf(t, code)
	var got []string
	for _, c := range info.calls {
		got = append(got, c.Connector+"."+c.Method)
	}
	if diff := cmp.Diff([]string{"notes.createNote", "github.issues.list_for_repo", "JSON.stringify"}, got); diff != "" {
		t.Fatalf("calls (-want +got):\n%s", diff)
	}
	c := info.calls[0]
	if c.Line != 4 || c.Col != 15 {
		t.Errorf("notes.createNote at %d:%d, want 4:15", c.Line, c.Col)
	}
	a := c.Args
	if a == nil || a.Kind != "object" || !a.Open || a.Value != nil || len(a.Props) != 5 {
		t.Fatalf("args of createNote: %+v", a)
	}
	want := map[string]string{"text": `string "hi"`, "tags": "array ", "n": "number -1.5", "ok": "boolean true", "none": "null null"}
	for _, p := range a.Props {
		if got := p.Value.Kind + " " + string(p.Value.Value); got != want[p.Key] {
			t.Errorf("property %s: %q, want %q", p.Key, got, want[p.Key])
		}
	}
	if p := a.Props[0]; p.Line != 4 || p.Col != 28 {
		t.Errorf("text at %d:%d, want 4:28", p.Line, p.Col)
	}
	gh := info.calls[1]
	if gh.Args == nil || !gh.Args.Open || len(gh.Args.Props) != 1 || gh.Args.Props[0].Value.Kind != "" {
		t.Errorf("args of list_for_repo: %+v", gh.Args)
	}
	if _, ok := info.roots["mine"]; ok {
		t.Error("a declared name is a root")
	}
	// A constant object literal has its JSON.
	info = staticOf(t, `notes.createNote({ text: "hi", n: [1, {x: false}] })`)
	if got := string(info.calls[0].Args.Value); got != `{"text":"hi","n":[1,{"x":false}]}` {
		t.Errorf("constant argument JSON %s", got)
	}
}

// TestLongLineLiteral: a program of one long line, a connector call with a
// large literal (a model sending data), is normalised in time linear in
// its size, and its positions are UTF-16 columns past the characters
// outside the Basic Multilingual Plane before them. Before the fix every
// position scanned its line from the start: a literal of 500,000 numbers
// (a MiB) took about 20 minutes, far past any run's timeout, so this test
// ran past go test's own.
func TestLongLineLiteral(t *testing.T) {
	const n = 500_000
	code := `notes.createNote({ s: "😀é", a: [` + strings.Repeat("1,", n-1) + "2] })"
	info := staticOf(t, code)
	if len(info.calls) != 1 || info.calls[0].Args == nil || len(info.calls[0].Args.Props) != 2 {
		t.Fatalf("static calls: %+v", info.calls)
	}
	items := info.calls[0].Args.Props[1].Value.Items
	if len(items) != n {
		t.Fatalf("%d items, want %d", len(items), n)
	}
	last := strings.LastIndex(code, "2")
	// 😀 is two UTF-16 units and four bytes, é one unit and two bytes.
	if want := last + 1 - 2 - 1; items[n-1].Line != 1 || items[n-1].Col != want {
		t.Errorf("last item at %d:%d, want 1:%d", items[n-1].Line, items[n-1].Col, want)
	}
}
