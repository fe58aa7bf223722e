package typegen

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
)

// compactJSON returns v as compact JSON without HTML escaping; map keys come
// out sorted. A string comes out as a literal valid in both JSON and
// TypeScript (U+2028 and U+2029 are escaped, invalid UTF-8 becomes U+FFFD).
func compactJSON(v any) string {
	b, err := jsontext.Marshal(v)
	if err != nil {
		// Decoded JSON values always encode; anything else is not a value.
		return "null"
	}
	return string(b)
}

// maxDocValue bounds the length of a default or example shown in JSDoc,
// and of what a diagnostic quotes of a schema.
const maxDocValue = 120

// maxExamples bounds the number of examples shown in JSDoc.
const maxExamples = 3

// docLines returns the JSDoc lines for a schema: its description, then
// @format, @default, @example and @deprecated tags.
func docLines(schema any) []string {
	m, ok := schema.(map[string]any)
	if !ok {
		return nil
	}
	var lines []string
	if d, ok := m["description"].(string); ok {
		lines = append(lines, textLines(d)...)
	}
	if f, ok := m["format"].(string); ok && strings.TrimSpace(f) != "" {
		lines = append(lines, "@format "+oneLine(f))
	}
	if v, ok := m["default"]; ok {
		lines = append(lines, "@default "+docValue(v))
	}
	examples, _ := m["examples"].([]any)
	if ex, ok := m["example"]; ok { // OpenAPI 3.0
		examples = append([]any{ex}, examples...)
	}
	for i, ex := range examples {
		if i == maxExamples {
			break
		}
		lines = append(lines, "@example "+docValue(ex))
	}
	if dep, _ := m["deprecated"].(bool); dep {
		lines = append(lines, "@deprecated")
	}
	return lines
}

// docValue renders a JSON value for JSDoc, or a diagnostic quoting a
// schema, on one bounded line.
func docValue(v any) string {
	s := oneLine(compactJSON(v))
	if utf8.RuneCountInString(s) > maxDocValue {
		s = string([]rune(s)[:maxDocValue]) + "…"
	}
	return s
}

// textLines splits free text into JSDoc lines: line breaks of any kind
// separate lines, control characters become spaces, trailing space and
// leading/trailing blank lines are dropped, and "*/" is escaped.
func textLines(s string) []string {
	s = newlines.Replace(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = cleanLine(l)
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// oneLine is textLines joined by spaces.
func oneLine(s string) string {
	return strings.Join(textLines(s), " ")
}

// cleanLine makes one line safe inside a JSDoc comment.
func cleanLine(l string) string {
	l = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, l)
	l = strings.TrimRightFunc(l, unicode.IsSpace)
	return strings.ReplaceAll(l, "*/", "*\\/")
}

// newlines turns every line ending into "\n".
var newlines = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\u2028", "\n", "\u2029", "\n")
