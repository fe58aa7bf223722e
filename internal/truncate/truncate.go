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
	"regexp"
	"strconv"
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
func Fit(result json.RawMessage, logs []string, budget int) (json.RawMessage, []string) {
	if len(result) > 0 && !json.Valid(result) {
		result = encode(stringNode(string(result)))
	}
	if budget <= 0 {
		return result, logs
	}
	if upperBound(result, logs) <= budget {
		return result, logs
	}
	r, l := &none, &none
	if len(result) > 0 {
		r = parseOrString(result)
	}
	if len(logs) > 0 {
		l = logsNode(logs)
	}
	if r.size+l.size <= budget {
		return result, logs
	}
	c := waterLevel([]*node{r, l}, budget)
	if len(result) > 0 {
		result = encode(fit(r, r.capped(c)))
	}
	if len(logs) > 0 {
		logs = encodeLogs(fit(l, l.capped(c)))
	}
	return result, logs
}

// String cuts s so that its JSON encoding measures at most max(budget,
// Slack) characters, keeping its head and ending it with "…[truncated N
// chars]". budget <= 0 means no limit.
func String(s string, budget int) string {
	if budget <= 0 || 6*len(s)+2 <= budget { // a character escapes to 6 at most
		return s
	}
	return fit(stringNode(s), budget).text // s itself when it fits
}

// none stands for an absent result or logs: it measures 0.
var none node

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

// logsNode builds the node of console lines; a final sandbox marker becomes
// the node's count of lines already dropped.
func logsNode(logs []string) *node {
	dropped := 0
	if m := logMarker.FindStringSubmatch(logs[len(logs)-1]); m != nil {
		if d, err := strconv.Atoi(m[1]); err == nil {
			dropped = d
			logs = logs[:len(logs)-1]
		}
	}
	n := &node{kind: kindLogs, kids: make([]*node, len(logs)), dropped: dropped}
	for i, l := range logs {
		n.kids[i] = stringNode(l)
	}
	n.measureSeq()
	return n
}
