// Package visible shows text that could hide or reorder itself for what it
// is. A person who approves a call reads its arguments; a bidirectional
// override (U+202E) can make "exe.txt" read "txt.exe", a zero-width space
// can make two different names look alike, a control character can end a
// line early. Every surface that shows a person what will run (the
// elicitation prompt, the approval console) marks such characters the same
// way: as the \uXXXX escape JSON would write.
package visible

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
)

// Hidden reports whether r is a character a person cannot see for what it
// is: a control character (newline and tab included), a format character
// (bidirectional overrides and isolates, zero-width characters, the byte
// order mark), a line or paragraph separator, a space other than U+0020
// (no-break and other widths), or another character Unicode says to draw
// as nothing (a default ignorable: Hangul fillers, the grapheme joiner,
// variation selectors).
func Hidden(r rune) bool {
	switch {
	case r == ' ':
		return false
	case r < 0x7f:
		return r < 0x20
	}
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Zs,
		unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// HasControl reports whether s, a name shown to and approved by a person,
// holds a control character (C0, DEL, C1) or a format character
// (bidirectional overrides and isolates, zero-width spaces and joiners),
// with which one name could pass for another. A name holding one is
// refused, not escaped: what a person approves should hold no invisible
// character at all.
func HasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) })
}

// Escape returns s with every hidden character but the newline written as
// its escape (see Code).
func Escape(s string) string {
	var b strings.Builder
	for _, seg := range Segments(s) {
		if seg.Rune == '\n' {
			b.WriteByte('\n')
			continue
		}
		b.WriteString(seg.Text)
	}
	return b.String()
}

// Code is how a hidden character is written: \n, \r and \t as such,
// others as \uXXXX (a surrogate pair above U+FFFF, as JSON writes it).
func Code(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	}
	if r > 0xFFFF {
		hi, lo := utf16.EncodeRune(r)
		return fmt.Sprintf(`\u%04X\u%04X`, hi, lo)
	}
	return fmt.Sprintf(`\u%04X`, r)
}

// A Segment is a run of text: plain, or one hidden character written as
// its Code (Rune is then that character).
type Segment struct {
	Text   string
	Hidden bool
	Rune   rune
}

// Segments splits s into plain runs and hidden characters, for a page
// that marks the hidden ones. Their concatenated Text is Escape(s) with
// newlines escaped too.
func Segments(s string) []Segment {
	var out []Segment
	start := 0
	for i, r := range s {
		if !Hidden(r) {
			continue
		}
		if i > start {
			out = append(out, Segment{Text: s[start:i]})
		}
		out = append(out, Segment{Text: Code(r), Hidden: true, Rune: r})
		start = i + len(string(r))
	}
	if start < len(s) {
		out = append(out, Segment{Text: s[start:]})
	}
	return out
}
