package typegen

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

func TestMethodPrefix(t *testing.T) {
	tests := []struct{ connector, method, want string }{
		{"everything", "get_sum", "EverythingGetSum"},
		{"memory", "create_entities", "MemoryCreateEntities"},
		{"x", "getItem", "XGetItem"},
		{"x", "get_item", "XGetItem"},
		{"x", "GET__ITEM", "XGETITEM"},
		{"github", "get_repos_owner_repo", "GithubGetReposOwnerRepo"},
		{"a", "get-sum.v2", "AGetSumV2"},
		{"$", "_", "T"},
		{"", "2fa", "T2fa"},
		{"été", "créer", "TCrEr"},
	}
	for _, tc := range tests {
		if got := newNamer(nil).methodPrefixes(tc.connector, []connectors.Tool{{Name: tc.method}})[0]; got != tc.want {
			t.Errorf("prefix of %q, %q = %q, want %q", tc.connector, tc.method, got, tc.want)
		}
	}
}

func TestPropertyKey(t *testing.T) {
	tests := []struct{ key, want string }{
		{"name", "name"},
		{"_a$1", "_a$1"},
		{"foo-bar", `"foo-bar"`},
		{"1abc", `"1abc"`},
		{"", `""`},
		{"default", `"default"`},
		{"naïve", `"naïve"`},
		{"a\"b\\c\n", `"a\"b\\c\n"`},
		{"\u2028", `"\u2028"`},
		{"\xff", `"\ufffd"`},
	}
	for _, tc := range tests {
		if got := propertyKey(tc.key); got != tc.want {
			t.Errorf("propertyKey(%q) = %s, want %s", tc.key, got, tc.want)
		}
	}
}

func TestValueIdent(t *testing.T) {
	tests := []struct{ name, want string }{
		{"notes", "notes"},
		{"été", "été"},
		{"get-sum", "get_sum"},
		{"2fa", "_2fa"},
		{"delete", "_delete"},
		{"", "_"},
	}
	for _, tc := range tests {
		if got := connectors.Identifier(tc.name); got != tc.want {
			t.Errorf("connectors.Identifier(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLibNames(t *testing.T) {
	for _, n := range []string{"Array", "Promise", "Record", "FileList", "HTMLElement", "MIDIInput", "Intl"} {
		if !libNames[n] {
			t.Errorf("libNames lacks %s", n)
		}
	}
	n := newNamer(nil)
	if got := n.unique("FileList"); got != "FileList2" {
		t.Errorf(`unique("FileList") = %q, want "FileList2"`, got)
	}
	if got := n.unique("FileList"); got != "FileList3" {
		t.Errorf(`second unique("FileList") = %q, want "FileList3"`, got)
	}
}

// TestCollidingNamesLinear checks that names sharing one base cost a try
// each, not one per name taken before them: methods and definitions whose
// names are all CJK (which pascal drops) share the connector's base. Twice
// the names take about twice the allocations, not four times.
func TestCollidingNamesLinear(t *testing.T) {
	gen := func(n int) string {
		ms := make([]connectors.Tool, n)
		for i := range ms {
			name := string(rune(0x4e00 + i))
			ms[i] = connectors.Tool{Name: "工" + name, InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/$defs/名` + name + `"}},"$defs":{"名` + name + `":{"type":"string"}}}`)}
		}
		return Declarations(Connector{Name: "c", Methods: ms})
	}
	if got := gen(3); !strings.Contains(got, "type CInput = {") || !strings.Contains(got, "type C3Input = {") || !strings.Contains(got, "type CType3 = string;") {
		t.Fatalf("names of colliding methods and definitions:\n%s", got)
	}
	small := testing.AllocsPerRun(1, func() { gen(1000) })
	large := testing.AllocsPerRun(1, func() { gen(2000) })
	if large > 3*small {
		t.Errorf("2,000 colliding names take %.0f allocations, 1,000 take %.0f: more than linear", large, small)
	}
}
