package source

import (
	"strings"
	"testing"
)

// BenchmarkNormalize is the cost of a 25-line TypeScript program through
// esbuild, goja's parser and the compiler.
func BenchmarkNormalize(b *testing.B) {
	for b.Loop() {
		if _, err := Normalize(benchProgram, ProgramFile); err != nil {
			b.Fatal(err)
		}
	}
}

const benchProgram = "```ts\n" + `interface Issue { id: number; title: string; labels: string[] }
type Summary = { total: number; byLabel: Record<string, number> };
async function main(): Promise<Summary> {
  const issues = (await github.list_issues({ state: "open" })) as Issue[];
  const byLabel: Record<string, number> = {};
  for (const issue of issues) {
    for (const label of issue.labels) {
      byLabel[label] = (byLabel[label] ?? 0) + 1;
    }
  }
  const top = Object.entries(byLabel)
    .sort(([, a], [, b]) => b - a)
    .slice(0, 5);
  console.log("top labels", top);
  await notes.createNote({
    text: top.map(([l, n]) => l + ": " + n).join("\n"),
  });
  return { total: issues.length, byLabel };
}
` + "```"

// BenchmarkCollectStatic is what finding a program's static calls adds to
// normalising a program seen for the first time (a typical program: four
// calls with object-literal arguments); the check itself is measured by
// runtime's BenchmarkCheckBeforeRunning.
func BenchmarkCollectStatic(b *testing.B) {
	const code = `async () => {
		const got = await kv.get({ key: "greeting" });
		await kv.add({ key: "seen", value: String(got.value) });
		const sum = await fx.get_sum({ a: 20, b: 22 });
		await kv.put({ key: "answer", value: String(sum) });
		return sum;
	}`
	res, _, err := transform(code)
	if err != nil {
		b.Fatal(err)
	}
	t, err := parseTransform(res, ProgramFile, strings.Count(code, "\n")+1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if info := collectStatic(t.prg, t.pm); len(info.calls) != 4 {
			b.Fatalf("%d calls", len(info.calls))
		}
	}
}

// BenchmarkCheckNesting is what bounding the nesting adds to normalising a
// program seen for the first time (BenchmarkNormalize's program).
func BenchmarkCheckNesting(b *testing.B) {
	code := stripFence(benchProgram)
	b.ReportAllocs()
	for b.Loop() {
		if err := checkNesting(code); err != nil {
			b.Fatal(err)
		}
	}
}
