package connectors

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIdentifier(t *testing.T) {
	tests := []struct{ in, want string }{
		{"get_sum", "get_sum"},
		{"get-sum", "get_sum"},
		{"get.sum", "get_sum"},
		{"a b/c", "a_b_c"},
		{"1abc", "_1abc"},
		{"-x", "_x"},
		{"delete", "_delete"},
		{"await", "_await"},
		{"__proto__", "___proto__"},
		{"constructor", "constructor"},
		{"", "_"},
		{"$ref", "$ref"},
		{"café-crème", "café_crème"},
		{"😀", "_"},
	}
	for _, tt := range tests {
		got := Identifier(tt.in)
		if got != tt.want {
			t.Errorf("Identifier(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !IsIdentifier(got) {
			t.Errorf("Identifier(%q) = %q is not an identifier", tt.in, got)
		}
	}
}

func TestIsIdentifier(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"get_sum", true}, {"$", true}, {"_", true}, {"a1", true}, {"é", true},
		{"get-sum", false}, {"1a", false}, {"", false}, {"await", false},
		{"class", false}, {"a b", false}, {"undefined", false},
	}
	for _, tt := range tests {
		if got := IsIdentifier(tt.in); got != tt.want {
			t.Errorf("IsIdentifier(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestValidateConnectorName(t *testing.T) {
	tests := []struct{ name, wantErr string }{
		{"github", ""},
		{"files2", ""},
		{"", "empty"},
		{"codemode", "reserved for the sandbox"},
		{"class", "reserved word"},
		{"Math", "shadow the JavaScript global"},
		{"console", "shadow the JavaScript global console"},
		{"my-server", `try "my_server"`},
		{"9lives", `try "_9lives"`},
		{"github.issues", ""},
		{"mcp.a.b_c", ""},
		{"a.", "empty segment"},
		{".a", "empty segment"},
		{"a..b", "empty segment"},
		{"codemode.x", `"codemode" is reserved for the sandbox's own API (in connector name "codemode.x")`},
		{"Math.x", "shadow the JavaScript global Math"},
		{"x.Math", ""}, // only the root is a global
		{"x.class", `"class" is a JavaScript reserved word (in connector name "x.class")`},
		{"x.my-issues", `"my-issues" is not a valid JavaScript identifier`},
		{"my-org.my-issues", `try "my_org.my_issues"`},
		{"x.__proto__", "prototype"},
		{"__proto__", "prototype"},
	}
	for _, tt := range tests {
		err := ValidateConnectorName(tt.name)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ValidateConnectorName(%q) = %v, want nil", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ValidateConnectorName(%q) = %v, want an error containing %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestNamespaceConflict(t *testing.T) {
	tests := []struct {
		names        []string
		leaf, nested string
	}{
		{[]string{"github", "notes"}, "", ""},
		{[]string{"mcp.a", "mcp.b", "mcp.c.d"}, "", ""},
		{[]string{"github", "github.issues"}, "github", "github.issues"},
		{[]string{"github.issues", "notes", "github"}, "github", "github.issues"},
		{[]string{"a.b.c", "a.b"}, "a.b", "a.b.c"},
		{[]string{"a.bc", "a.b"}, "", ""},
		{[]string{"ab.c", "a"}, "", ""},
	}
	for _, tt := range tests {
		leaf, nested, ok := NamespaceConflict(tt.names)
		if leaf != tt.leaf || nested != tt.nested || ok != (tt.leaf != "") {
			t.Errorf("NamespaceConflict(%q) = %q, %q, %v; want %q, %q", tt.names, leaf, nested, ok, tt.leaf, tt.nested)
		}
	}
}

func TestAssignNames(t *testing.T) {
	tests := []struct {
		name       string
		sources    []string
		want       []string
		collisions []Collision
	}{
		{"no clash", []string{"get-sum", "echo"}, []string{"get_sum", "echo"}, nil},
		{"exact source name keeps the plain name",
			[]string{"get-sum", "get_sum"}, []string{"get_sum_2", "get_sum"},
			[]Collision{{Name: "get_sum", Sources: []string{"get-sum", "get_sum"}}}},
		{"otherwise the first keeps it",
			[]string{"a-b", "a.b"}, []string{"a_b", "a_b_2"},
			[]Collision{{Name: "a_b", Sources: []string{"a-b", "a.b"}}}},
		{"suffix skips taken names",
			[]string{"a-b", "a_b", "a_b_2"}, []string{"a_b_3", "a_b", "a_b_2"},
			[]Collision{{Name: "a_b", Sources: []string{"a-b", "a_b"}}}},
		{"three-way, sources sorted",
			[]string{"x.y", "x-y", "x y"}, []string{"x_y", "x_y_2", "x_y_3"},
			[]Collision{{Name: "x_y", Sources: []string{"x y", "x-y", "x.y"}}}},
		{"reserved word",
			[]string{"class", "_class"}, []string{"_class_2", "_class"},
			[]Collision{{Name: "_class", Sources: []string{"_class", "class"}}}},
		{"collisions in order of first appearance",
			[]string{"b-1", "a-1", "b.1", "a.1"}, []string{"b_1", "a_1", "b_1_2", "a_1_2"},
			[]Collision{{Name: "b_1", Sources: []string{"b-1", "b.1"}}, {Name: "a_1", Sources: []string{"a-1", "a.1"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools := make([]Tool, len(tt.sources))
			for i, s := range tt.sources {
				tools[i].SourceName = s
			}
			collisions := AssignNames(tools)
			var names []string
			for i, tool := range tools {
				names = append(names, tool.Name)
				if tool.SourceName != tt.sources[i] {
					t.Errorf("SourceName changed: %q -> %q", tt.sources[i], tool.SourceName)
				}
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.collisions, collisions); diff != "" {
				t.Errorf("collisions (-want +got):\n%s", diff)
			}
		})
	}
	if got := (Collision{Name: "a_b", Sources: []string{"a-b", "a.b"}}).String(); got != "a_b <- a-b, a.b" {
		t.Errorf("Collision.String() = %q", got)
	}
}
