// Package short shortens text for messages: the first line of a text, a
// text clipped to a size on a character boundary, a byte count in words.
// Errors, log lines and descriptions all use these, so the same thing reads
// the same everywhere.
package short

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// FirstLine is the first line of s, without surrounding white space.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

// Clip returns s cut to at most n bytes, on a character boundary, with an
// ellipsis marking the cut (so the result may be n+3 bytes long).
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// maxQuoted bounds what Quote keeps of a value (bytes).
const maxQuoted = 40

// Quote is a value from a client (a parameter, a header, a path) quoted
// for a message about it: clipped, so that an answer never repeats a long
// text someone put in a request, and with its control characters escaped.
func Quote(s string) string { return strconv.Quote(Clip(s, maxQuoted)) }

// Bytes renders a size as "512 bytes", "3.2 KiB", "256 MiB" or "1 GiB"
// (one decimal, dropped when it is zero).
func Bytes(n int64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatInt(n, 10) + " bytes"
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + units[i]
}

// Plural is one when n is 1, else many ("propert"+Plural(n, "y", "ies")).
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// OrList joins words as "a, b or c".
func OrList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
