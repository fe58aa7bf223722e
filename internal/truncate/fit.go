package truncate

import (
	"math"
	"slices"
	"sort"

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

// fit appends to f.out the JSON value v cut to measure at most max(b,
// v.min). chain, when not empty, holds v's heavy descendants measured
// already (see plan).
func (f *fitter) fit(v value, b int, chain []value) {
	switch {
	case v.size <= b || v.min >= v.size:
		f.appendWhole(v)
	case b <= v.min:
		f.appendMinimal(v)
	case v.kind == kindArr || v.kind == kindObj:
		f.fitSeq(v, b, chain)
	default: // a string or a very long number
		f.out = f.appendHead(append(f.out, '"'), v, b)
		f.out = append(f.out, '"')
	}
}

// fitSeq appends the array or object v cut to b, which lies between its
// min and its size: its head entries that plan keeps, each cut to its
// share, then the marker entry for the others.
func (f *fitter) fitSeq(v value, b int, chain []value) {
	mark := len(f.kids)
	kept, c, chain := f.plan(v, b, chain)
	open, end := f.src[v.pos], f.src[v.end-1] // its brackets
	f.out = append(f.out, open)
	for i, kid := range kept {
		if i > 0 {
			f.out = append(f.out, ',')
		}
		if v.kind == kindObj {
			f.appendString(kid.key)
			f.out = append(f.out, ':')
		}
		var sub []value
		if len(chain) > 0 && chain[0].pos == kid.pos {
			sub = chain[1:]
		}
		f.fit(kid, kid.capped(c), sub)
	}
	if d := v.n - len(kept); d > 0 {
		if len(kept) > 0 {
			f.out = append(f.out, ',')
		}
		f.appendMarker(v, d)
	}
	f.out = append(f.out, end)
	f.kids = f.kids[:mark]
}

// fitLogs returns the console lines of logs cut to b: its head lines that
// plan keeps, each cut to its share, then the marker line for the others.
func (f *fitter) fitLogs(logs value, b int) []string {
	mark := len(f.kids)
	var kept []value
	c := 0
	switch {
	case logs.size <= b || logs.min >= logs.size:
		kept, c = make([]value, len(f.lines)), math.MaxInt
		for i, l := range f.lines {
			kept[i] = lineValue(l, i)
		}
	case b > logs.min:
		kept, c, _ = f.plan(logs, b, nil)
	}
	out := make([]string, 0, len(kept)+1)
	for _, kid := range kept {
		out = append(out, f.cutLine(kid, kid.capped(c)))
	}
	if d := len(f.lines) - len(kept) + f.dropped; d > 0 {
		out = append(out, logs.markerValue(d))
	}
	f.kids = f.kids[:mark]
	return out
}

// plan chooses how many head entries of v to keep within b, which lies
// between its min and its size, and the cap c of their shares, so that
// the largest are cut first. It measures the entries one by one from the
// head and stops at the first that could not be kept, so it holds only
// entries that can be shown, never a long tail. The kept entries are on
// f.kids until the caller takes them off.
//
// A container cut within a container cut reads its entries again; what
// keeps that from costing the depth of nesting over again is the chain of
// v's heavy descendants, each longer than half the text of the container
// whose plan measured them: plan passes chain[1:] to the entry that is
// chain[0], which skips measuring that entry again, and when it has none
// it gathers one while it measures. Every byte is then measured again
// only where it lies in a lighter half, a logarithmic number of times.
func (f *fitter) plan(v value, b int, chain []value) (kept []value, c int, heavy []value) {
	inner := b - 2
	total, dropped := v.n, 0
	if v.kind == kindLogs {
		dropped = f.dropped
	}
	share := arrayShare
	if v.kind == kindObj {
		share = objectShare
	}
	floor := max(minShare, inner/share)
	// overhead(k): commas and the marker entry when k entries are kept.
	overhead := func(k int) int { return v.overhead(k, total-k+dropped) }

	record := len(chain) == 0 && v.kind != kindLogs
	if record {
		f.thr = (v.end - v.pos) / 2
	}
	// Keep the most entries such that each gets at least the floor (or its
	// whole size when smaller); failing that, one entry if it fits at all.
	// An entry whose min does not fit after the ones before it at their
	// mins ends the search: no later count can fit.
	mark := len(f.kids)
	kFloor, one := 0, false
	sumFloor, sumMin := 0, 0
	cur := f.first(v)
	for k := 0; k <= total; k++ {
		if k > 0 {
			var kid value
			kid, cur = f.entry(v, cur, chain)
			if len(f.kids) == cap(f.kids) {
				// Doubled, not by append's quarters: what it allocates
				// over all stays within twice what it holds.
				f.kids = append(make([]value, 0, 2*cap(f.kids)), f.kids...)
			}
			f.kids = append(f.kids, kid)
			sumFloor += kid.keySize + kid.capped(floor)
			sumMin += kid.keySize + kid.min
			if sumMin+k-1 > inner {
				break
			}
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
	heavy = chain
	if record {
		heavy, f.rec, f.thr = f.rec, nil, math.MaxInt // the entries' to keep
		slices.Reverse(heavy)                         // scan gathers them innermost first
	}
	k := kFloor
	if k == 0 && one {
		k = 1
	}
	f.kids = f.kids[:mark+k]
	kept = f.kids[mark:]
	room := inner - overhead(k)
	for _, kid := range kept {
		room -= kid.keySize
	}
	return kept, waterLevel(kept, room), heavy
}

// first returns where v's first entry is read from: an index into f.src,
// or into f.lines for the logs.
func (f *fitter) first(v value) int {
	if v.kind == kindLogs {
		return 0
	}
	return jsontext.SkipSpace(f.src, v.pos+1)
}

// entry measures the entry of v at cur (see first) and returns where the
// next is read from. An entry that is chain[0] is taken from it.
func (f *fitter) entry(v value, cur int, chain []value) (value, int) {
	if v.kind == kindLogs {
		return lineValue(f.lines[cur], cur), cur + 1
	}
	key, keySize := 0, 0
	if v.kind == kindObj {
		key = cur
		keySize, _, cur = f.scanString(cur)
		keySize++                                // the colon
		cur = jsontext.SkipSpace(f.src, cur) + 1 // past the colon
	}
	var kid value
	if cur = jsontext.SkipSpace(f.src, cur); len(chain) > 0 && chain[0].pos == cur {
		kid = chain[0]
	} else {
		kid, _ = f.scan(cur, 0) // its depth was checked when v was measured
	}
	kid.key, kid.keySize = key, keySize
	if cur = jsontext.SkipSpace(f.src, kid.end); f.src[cur] == ',' {
		cur = jsontext.SkipSpace(f.src, cur+1)
	}
	return kid, cur
}

// waterLevel returns the largest cap c such that the values, each given
// capped(c), fit in room; values are never given less than their min, so
// the sum may exceed room when the mins do. Fit shares its budget between
// a result and its logs the same way, so the larger is cut first.
func waterLevel(vs []value, room int) int {
	hi := 0
	for _, v := range vs {
		hi = max(hi, v.size)
	}
	sum := func(c int) int {
		s := 0
		for i := range vs {
			s += vs[i].capped(c)
		}
		return s
	}
	// sum grows with c: the first c over room is one past the level (0
	// when even sum(0) is over).
	return max(0, sort.Search(hi+1, func(c int) bool { return sum(c) > room })-1)
}
