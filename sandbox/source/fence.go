package source

import "strings"

// stripFence removes a Markdown code fence around code, if there is one,
// without moving any line: the fence lines and everything outside the fenced
// block become empty lines, so line L of the result is line L of code and
// columns are unchanged.
//
// A fence is recognised when the first non-blank line starts with ``` (any
// info string may follow: js, ts, typescript, javascript, or none). The block
// ends at the last line after it that consists only of backticks (so a ```
// inside a template literal does not end it); without such a line it runs to
// the end. Anything after the closing line is dropped.
func stripFence(code string) string {
	lines := strings.SplitAfter(code, "\n")
	open := -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, "```") {
			open = i
		}
		break
	}
	if open < 0 {
		return code
	}
	end := len(lines)
	for i := len(lines) - 1; i > open; i-- {
		t := strings.TrimSpace(lines[i])
		if len(t) >= 3 && strings.Trim(t, "`") == "" {
			end = i
			break
		}
	}
	var b strings.Builder
	b.Grow(len(code))
	for i, l := range lines {
		if i > open && i < end {
			b.WriteString(l)
			continue
		}
		if strings.HasSuffix(l, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
