package truncate

import (
	"sort"
	"unicode/utf8"

	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
)

// Thresholds for keeping entries of an array (or console lines) or an
// object: entries are dropped from the tail rather than letting the kept
// ones be cut below a fraction of the container's room, so the model sees
// a few whole items rather than many stubs. Objects use a smaller fraction:
// they keep their keys as long as values keep some content.
const (
	arrayShare  = 16 // items are not cut below room/16 …
	objectShare = 64 // … values below room/64 …
	minShare    = 32 // … nor below 32 characters, where room allows
)

// fit returns n cut to measure at most max(b, n.min).
func fit(n *node, b int) *node {
	switch {
	case n.size <= b:
		return n
	case b <= n.min:
		return minimal(n)
	}
	switch n.kind {
	case kindStr, kindNum:
		return cutString(n.text, b)
	case kindArr, kindObj, kindLogs:
		return fitSeq(n, b)
	}
	return n
}

// minimal returns the smallest form of n: a container's marker alone, a
// string's (or very long number's) marker alone, a literal as it is.
func minimal(n *node) *node {
	if n.min >= n.size {
		return n
	}
	switch n.kind {
	case kindStr, kindNum:
		return stringNode(stringMarker(utf8.RuneCountInString(n.text)))
	case kindArr, kindObj, kindLogs:
		out := &node{kind: n.kind, markerKey: n.markerKey, dropped: len(n.kids) + n.dropped}
		out.measureSeq()
		return out
	}
	return n
}

// cutString keeps the head of s that fits b with the marker counting the
// characters dropped. b exceeds the marker-only measure.
func cutString(s string, b int) *node {
	runes := utf8.RuneCountInString(s)
	// The marker of the whole length is at least as long as the final one.
	avail := b - stringMinSize(runes)
	used, end, kept := 0, 0, 0
	for end < len(s) {
		r, size := utf8.DecodeRuneInString(s[end:])
		c := jsontext.CharLen(r, size)
		if used+c > avail {
			break
		}
		used += c
		end += size
		kept++
	}
	return stringNode(s[:end] + stringMarker(runes-kept))
}

// fitSeq cuts an array, object or logs node to b, which lies between its
// min and its size: it chooses how many head entries to keep, then shares
// the room among them so the largest are cut first.
func fitSeq(n *node, b int) *node {
	inner := b - 2
	total := len(n.kids)
	share := arrayShare
	if n.kind == kindObj {
		share = objectShare
	}
	floor := max(minShare, inner/share)

	// overhead(k): commas and the marker entry when k entries are kept.
	overhead := func(k int) int { return n.overhead(k, total-k+n.dropped) }
	// Keep the most entries such that each gets at least the floor (or its
	// whole size when smaller); failing that, one entry if it fits at all.
	kFloor, one := 0, false
	sumFloor, sumMin := 0, 0
	for k := 0; k <= total; k++ {
		if k > 0 {
			kid, key := n.kids[k-1], n.keySize(k-1)
			sumFloor += key + kid.capped(floor)
			sumMin += key + kid.min
		}
		// Not monotonic: keeping every entry drops the marker.
		o := overhead(k)
		if k == 1 && sumMin+o <= inner {
			one = true
		}
		if sumFloor+o <= inner {
			kFloor = k
		}
	}
	k := kFloor
	if k == 0 && one {
		k = 1
	}

	room := inner - overhead(k)
	for i := range k {
		room -= n.keySize(i)
	}
	c := waterLevel(n.kids[:k], room)
	out := &node{kind: n.kind, markerKey: n.markerKey, dropped: total - k + n.dropped}
	out.kids = make([]*node, k)
	for i, kid := range n.kids[:k] {
		out.kids[i] = fit(kid, kid.capped(c))
	}
	if n.kind == kindObj {
		out.keys, out.keySizes = n.keys[:k], n.keySizes[:k]
	}
	out.measureSeq()
	return out
}

// capped is n's share of room under the cap c: its measure up to c, but
// never less than its min.
func (n *node) capped(c int) int { return min(n.size, max(n.min, c)) }

// keySize is the measure of entry i's key and colon (0 outside objects).
func (n *node) keySize(i int) int {
	if n.kind != kindObj {
		return 0
	}
	return n.keySizes[i]
}

// waterLevel returns the largest cap c such that the kids, each given
// capped(c), fit in room; kids are never given less than their min, so the
// sum may exceed room when the mins do. Fit shares its budget between a
// result and its logs the same way, so the larger is cut first.
func waterLevel(kids []*node, room int) int {
	hi := 0
	for _, k := range kids {
		hi = max(hi, k.size)
	}
	sum := func(c int) int {
		s := 0
		for _, k := range kids {
			s += k.capped(c)
		}
		return s
	}
	// sum grows with c: the first c over room is one past the level (0
	// when even sum(0) is over).
	return max(0, sort.Search(hi+1, func(c int) bool { return sum(c) > room })-1)
}
