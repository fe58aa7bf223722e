package tscheck

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWrapKeepsLines(t *testing.T) {
	code := "```ts\nconst a: number = 1;\nexport default async () => a;\n```"
	got := wrap(code)
	lines := strings.Split(got, "\n")
	if lines[wrapLines+1] != "const a: number = 1;" || lines[wrapLines+2] != "return async () => a;" {
		t.Errorf("wrapped:\n%s", got)
	}
	if lines[wrapLines] != "" || lines[wrapLines+3] != "" {
		t.Errorf("fence lines not blanked:\n%s", got)
	}
}

func TestParse(t *testing.T) {
	out := "connectors.d.ts(3,1): error TS2300: Duplicate identifier 'x'.\n" +
		"program.ts(5,20): error TS2339: Property 'txt' does not exist on type '{ id: string; }'.\n" +
		"program.ts(7,3): error TS2322: Type 'number' is not assignable to type 'string'.\n" +
		"  The expected type comes from property 'text'.\n"
	want := []string{
		"line 3:20: Property 'txt' does not exist on type '{ id: string; }'. (TS2339)",
		"line 5:3: Type 'number' is not assignable to type 'string'. (TS2322) The expected type comes from property 'text'.",
	}
	if diff := cmp.Diff(want, parseDiagnostics(out, "program.ts")); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

func TestOnlyIn(t *testing.T) {
	if !onlyIn("connectors.d.ts(3,1): error TS2300: Duplicate identifier 'x'.\n", "connectors.d.ts") {
		t.Error("declaration errors only: want true")
	}
	if onlyIn("error TS6044: Compiler option 'types' expects an argument.\n", "connectors.d.ts") {
		t.Error("an error without a location is the checker's failure")
	}
	if onlyIn("", "connectors.d.ts") {
		t.Error("no errors at all is not errors in the declarations")
	}
}
