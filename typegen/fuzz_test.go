package typegen

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// FuzzSchema feeds arbitrary bytes as a schema to Schema and, as input and
// output schemas, to Declarations: neither may panic, and both must produce
// TypeScript that passes checkDeclarations (balanced, parsed by esbuild,
// every type declared once and every referenced type declared).
func FuzzSchema(f *testing.F) {
	for _, tc := range schemaCases {
		f.Add([]byte(tc.schema))
	}
	f.Add([]byte(`{"$defs":{"A":{"anyOf":[{"$ref":"#/$defs/A"},{"items":{"$ref":"#"}}]}},"$ref":"#/$defs/A"}`))
	f.Add([]byte(`{"properties":{"*/":{"description":"/* } ] ) \" '","enum":["}","\\\"]"]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out := Schema(json.RawMessage(data))
		if err := checkDeclarations("type T = " + out + ";\n"); err != "" {
			t.Fatalf("Schema(%q) = %q: %s", data, out, err)
		}
		decl := Declarations(Connector{Name: "f", Methods: []connectors.Tool{
			{Name: "m", Description: string(data), InputSchema: data, OutputSchema: data},
		}})
		if err := checkDeclarations(decl); err != "" {
			t.Fatalf("Declarations with schema %q = %q: %s", data, decl, err)
		}
	})
}

// checkBalanced scans TypeScript and reports unbalanced (), [] or {}, an
// unterminated string literal or an unterminated comment; "" means fine.
func checkBalanced(ts string) string {
	var stack []byte
	closer := map[byte]byte{')': '(', ']': '[', '}': '{'}
	for i := 0; i < len(ts); i++ {
		switch c := ts[i]; c {
		case '"':
			for i++; i < len(ts) && ts[i] != '"'; i++ {
				if ts[i] == '\\' {
					i++
				} else if ts[i] == '\n' {
					return "newline in string literal"
				}
			}
			if i >= len(ts) {
				return "unterminated string literal"
			}
		case '/':
			if i+1 < len(ts) && ts[i+1] == '*' {
				end := strings.Index(ts[i+2:], "*/")
				if end < 0 {
					return "unterminated comment"
				}
				i += 2 + end + 1
			} else if i+1 < len(ts) && ts[i+1] == '/' {
				for i < len(ts) && ts[i] != '\n' {
					i++
				}
			}
		case '(', '[', '{':
			stack = append(stack, c)
		case ')', ']', '}':
			if len(stack) == 0 || stack[len(stack)-1] != closer[c] {
				return "unbalanced " + string(c)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return "unclosed " + string(stack)
	}
	return ""
}

func TestCheckBalanced(t *testing.T) {
	tests := []struct{ ts, want string }{
		{`{ a: [string, (number)] }`, ""},
		{`{ "}": string /* ] */ }`, ""},
		{`{ a: string`, "unclosed {"},
		{`[string}`, "unbalanced }"},
		{`"abc`, "unterminated string literal"},
		{`/** x`, "unterminated comment"},
		{`/** *\/ */ {}`, ""},
	}
	for _, tc := range tests {
		if got := checkBalanced(tc.ts); got != tc.want {
			t.Errorf("checkBalanced(%q) = %q, want %q", tc.ts, got, tc.want)
		}
	}
}
