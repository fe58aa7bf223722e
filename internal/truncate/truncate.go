// Package truncate cuts what the model sees of a run — its result and its
// console lines — to a size budget, structurally: the output is valid JSON
// of the same shape, the largest values are cut first, arrays keep their
// head and end with an "… N more items" element, objects keep their keys
// (cutting values; only when even that cannot fit do trailing keys give way
// to a "…" key), strings keep their head and end with "…[truncated N
// chars]", and console lines keep their head and end with a "… N more log
// lines truncated" line.
//
// # Measure
//
// Sizes are counted in characters (Unicode code points) of compact JSON as
// encoding/json.Marshal writes it: strings escaped as Marshal escapes them
// (so "<" counts 6, as \u003c; an invalid UTF-8 byte 6, as \ufffd), numbers
// as their literal text, no whitespace. The size of a run's visible part is
//
//	Size(result) + Size(logs)
//
// where Size(result) is the measure of the result value (0 when there is
// none) and Size(logs) the measure of the logs as one JSON array of strings
// (0 when there are no lines). Keys, brackets, commas and markers count.
//
// # Guarantee
//
// Fit's output measures at most max(budget, Slack): a budget too small for
// even the markers yields the smallest form (every value reduced to its
// marker), which never exceeds Slack. The functions are pure and
// deterministic.
package truncate

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
)

// Slack bounds the measure of the smallest form Fit can produce, so output
// never exceeds max(budget, Slack).
const Slack = 100

// Fit cuts result (a JSON value; empty means none) and logs together so that
// Size(result)+Size(logs) is at most budget (see the package comment). When
// they fit already they are returned unchanged. Otherwise the budget is
// shared so that the larger part is cut first, and each is cut
// structurally. A final log line "… N more log lines truncated" (the
// sandbox's own marker) is merged with the lines cut here into one marker.
// A result that is not valid JSON is replaced by a JSON string of its text
// (even when budget <= 0, which means no limit).
//
// What Fit allocates follows the budget, not the input: it measures the
// result where it lies and holds only the entries that can be shown (see
// fitter.plan), however many values the result has.
func Fit(result json.RawMessage, logs []string, budget int) (json.RawMessage, []string) {
	text := len(result) > 0 && !json.Valid(result)
	if budget <= 0 || upperBound(result, logs) <= budget {
		if text {
			result = jsontext.AppendString(nil, string(result))
		}
		return result, logs
	}
	f := fitter{src: result, thr: math.MaxInt, kids: make([]value, 0, min(budget, len(result)+2*len(logs))/32+64)}
	var r, l value // none measures 0
	var chain []value
	if len(result) > 0 {
		r, chain = f.root(text)
	}
	if len(logs) > 0 {
		l = f.logs(logs)
	}
	if r.size+l.size <= budget {
		if text {
			result = jsontext.AppendString(nil, string(result))
		}
		return result, logs
	}
	c := waterLevel([]value{r, l}, budget)
	if len(result) > 0 {
		f.out = make([]byte, 0, min(r.capped(c)+r.capped(c)/4, len(result)*2))
		f.fit(r, r.capped(c), chain)
		result = f.out
	}
	if len(logs) > 0 {
		logs = f.fitLogs(l, l.capped(c))
	}
	return result, logs
}

// root measures the result, and the chain of its heavy descendants (see
// fitter.plan). One nested deeper than maxDepth, or not JSON at all
// (text), is taken as a string of its text.
func (f *fitter) root(text bool) (value, []value) {
	if !text {
		f.thr = len(f.src) / 2
		v, ok := f.scan(0, 0)
		chain := f.rec
		f.thr, f.rec = math.MaxInt, nil
		if ok {
			slices.Reverse(chain) // scan gathers them innermost first
			return v, chain[1:]   // chain[0] is v
		}
	}
	v := value{kind: kindText, end: len(f.src)}
	size, n := 2, 0
	for i := 0; i < len(f.src); n++ {
		r, s, next := f.char(v, i)
		size += jsontext.CharLen(r, s)
		i = next
	}
	v.measureString(size, n)
	return v, nil
}

// String cuts s so that its JSON encoding measures at most max(budget,
// Slack) characters, keeping its head and ending it with "…[truncated N
// chars]". budget <= 0 means no limit.
func String(s string, budget int) string {
	if budget <= 0 || 6*len(s)+2 <= budget { // a character escapes to 6 at most
		return s
	}
	f := fitter{lines: []string{s}}
	return f.cutLine(lineValue(s, 0), budget) // s itself when it fits
}

// upperBound is a cheap bound on Size(result)+LogsSize(logs): no byte
// escapes to more than six characters.
func upperBound(result json.RawMessage, logs []string) int {
	n := 0
	if len(result) > 0 {
		n += 6*len(result) + 2
	}
	if len(logs) > 0 {
		n += 2 + 3*len(logs)
		for _, l := range logs {
			n += 6 * len(l)
		}
	}
	return n
}

// logMarker matches the marker line the sandbox appends when it drops
// console lines.
var logMarker = regexp.MustCompile(`^… ([0-9]{1,18}) more log lines truncated$`)

// logs measures the console lines; the sandbox's marker becomes the
// count of lines already dropped. The sandbox drops every line after the
// first it drops, so its marker is last but for warnings ("[warn] "
// lines: the sandbox's notes, the runtime's), which stay after the lines
// kept.
func (f *fitter) logs(logs []string) value {
	i := len(logs) - 1
	for i > 0 && strings.HasPrefix(logs[i], "[warn] ") {
		i--
	}
	if m := logMarker.FindStringSubmatch(logs[i]); m != nil {
		if d, err := strconv.Atoi(m[1]); err == nil {
			f.dropped = d
			if i == len(logs)-1 {
				logs = logs[:i]
			} else { // a copy: the caller's lines stay as they are
				logs = append(logs[:i:i], logs[i+1:]...)
			}
		}
	}
	f.lines = logs
	v := value{kind: kindLogs, n: len(logs)}
	size := 0
	for i, l := range logs {
		size += lineValue(l, i).size
	}
	v.measureSeq(len(logs), size, f.dropped)
	return v
}

// lineValue measures the console line l, line i of its fitter.
func lineValue(l string, i int) value {
	v := value{kind: kindLine, pos: i}
	v.measureString(strSize(l))
	return v
}
