// Package search is the ranked index behind codemode.search: it finds
// connector methods, connectors and snippets by plain-language queries
// ("merge a pull request", "add two numbers").
//
// Scoring is BM25F: a document has fields (its name, a summary, its
// description, parameter names, tags, an HTTP route, its container's name)
// whose term frequencies are weighted and length-normalised per field, and
// a query term contributes idf × tf/(k1 + tf) of that weighted frequency.
// Text is analysed the same way on both sides: names are split at
// camelCase, snake_case, dots and slashes; stop words go; abbreviations
// are spelt out (repo → repository, PR → pull request); words are stemmed
// (plural and singular, -ed and -ing forms meet). A query word also finds,
// at lower weights, its synonyms (open ≈ create, remove ≈ delete), the
// terms of its root (deploy, deployment; see root) and, when no document
// has it, the terms it begins ("deps": dependency); only the best of them
// counts. A document's score grows with the share of the query's words
// it matches, counting only the words something in the index stands for.
//
// Meaning comes from English word vectors (package wordvec): a document
// whose name and summary mean what the query means (the cosine of their
// idf-weighted mean vectors) scores higher. A query's mood counts too: a
// question ("which checks failed?") wants a method that only reads, and
// one that reads gives way a little to one that writes when the query
// asks to change something (see mood). What the query asks to do is
// its leading verb, in a later clause when the first states a situation,
// a noun used as a verb ("comment on an issue") or a leading word the
// index does not have before what a verb acts on ("slap a label on #88";
// see parseQuery).
//
// Every rule here earns its place on query sets the search was not tuned
// on, measured with and without it (BENCHMARKS.md, "Search"): a consumer
// reads the first results and can search again, so what counts is the
// intended method among the first 5 and 20. Rules that did not earn it
// were deleted; what generalised works on the form of words (roots,
// prefixes, which words the index knows) rather than lists of them.
// Words the documents do not use are still what it misses most.
//
// An Index is immutable and made of Segments, one per group of documents
// (a connector's methods); replacing one group (With) reuses the others,
// so a change to one connector re-analyses only its documents. Statistics
// (document frequencies, average field lengths) are summed over segments
// at query time, so they are always those of the whole index.
package search

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/codemode-mcp/codemode-mcp/internal/search/wordvec"
)

// Field is a part of a document scored with its own weight.
type Field int

// The fields of a document.
const (
	// Name is the item's own name (a method's sandbox and source names).
	Name Field = iota
	// Summary is its title and the first line of its description.
	Summary
	// Text is the rest of its description.
	Text
	// Params are the names of its input's properties.
	Params
	// Tags are the groups its source puts it in (OpenAPI tags).
	Tags
	// Route is an HTTP operation's method and path template.
	Route
	// Container is the name of what holds it (a method's connector).
	Container
	// Schema is what its input's nested properties say: their names, the
	// values they allow, their descriptions.
	Schema
	// NumFields counts the fields.
	NumFields
)

// fieldWeight and fieldB are BM25F's per-field boost and length
// normalisation. Names and summaries say what a method does; long
// descriptions mention many things in passing.
var (
	fieldWeight = [NumFields]float64{Name: 1, Summary: 0.8, Text: 0.4, Params: 0.15, Tags: 0.4, Route: 0.4, Container: 0.3, Schema: 0.3}
	fieldB      = [NumFields]float64{Name: 1, Summary: 0.6, Text: 0.6, Params: 0.5, Tags: 0.3, Route: 0.5, Container: 0.3, Schema: 0.75}
)

const (
	k1 = 1.2
	// coverageWeight is how much the share of a query's words a document
	// matches scales its score: score × (1 - c + c × matched/words),
	// counting only the words something in the index stands for (a name,
	// "carol", or a word of the situation no method has, "burning", would
	// lower every document's share alike and weaken the words that tell
	// documents apart).
	coverageWeight = 0.6
	// nameBoost rewards a document whose name the query covers: its score
	// is multiplied by 1 + nameBoost × (name words matched / name words),
	// so "getSum" puts get_sum before a method that only mentions it.
	nameBoost = 2.5
	// denseWeight and denseFloor weigh how near a document's meaning is to
	// the query's (the cosine of their dense vectors): its score is
	// multiplied by 1 + denseWeight × (cosine - denseFloor) when the
	// cosine is above the floor.
	denseWeight = 1.0
	denseFloor  = 0.3
	// prefixWeight weighs the indexed terms a query word no document has
	// begins ("deps" finds dependabot and dependency), at most
	// maxPrefixTerms of them.
	prefixWeight   = 0.6
	maxPrefixTerms = 16
	// rootWeight weighs the indexed terms that share a query word's root
	// (see root): "deploy" finds deployment, "owned" owner.
	rootWeight = 0.5
)

// Doc is one document: a value the caller gets back with its hits, and
// the text of each field.
type Doc[T any] struct {
	Value  T
	Fields [NumFields]string
	// Weight scales the document's score (0 means 1): less than 1 for
	// documents that should give way to others matching as well.
	Weight float64
	// Effect says whether the document is a method known to only read
	// (Reads), one that may change something (Writes), or neither.
	Effect Effect
}

// Effect is what a method does to the world, as its source declares.
type Effect uint8

// The effects.
const (
	// Unknown is a document that is not a method, or whose source says
	// nothing.
	Unknown Effect = iota
	// Reads is a method known to have no side effect.
	Reads
	// Writes is a method that may have one.
	Writes
)

// Segment is the analysed form of a group of documents. It is immutable.
type Segment[T any] struct {
	docs  []segDoc[T]
	total [NumFields]int // terms per field, over the segment
	post  map[string][]posting
	// vocab is the segment's terms, sorted (for prefixes), and roots its
	// terms by their root, where that is not the term itself.
	vocab []string
	roots map[string][]string
	// vecTerms are the terms that have word vectors, and vecs those
	// vectors (of the shortest word that gave the term).
	vecTerms []string
	vecs     []wordvec.Vec
}

// segDoc is what a segment keeps of a document.
type segDoc[T any] struct {
	value  T
	weight float64
	effect Effect
	lens   [NumFields]uint16 // terms per field
	// gist is the terms of its name and summary that have vectors
	// (indices into vecTerms, repeated as often as they occur): what its
	// dense vector is made of (see Index.dense).
	gist []int32
}

// posting is one document holding a term, with the term's frequency in
// each field.
type posting struct {
	doc int32
	tf  [NumFields]uint16
}

// termTF is a term of a document with its frequency in each field.
type termTF struct {
	term string
	tf   [NumFields]uint16
}

// NewSegment analyses docs.
func NewSegment[T any](docs []Doc[T]) *Segment[T] {
	s := &Segment[T]{docs: make([]segDoc[T], len(docs)), post: map[string][]posting{}}
	local := map[string]int{} // a document's terms: index in tfs
	var tfs []termTF
	surface := map[string]string{} // a term: the shortest word that gave it
	gist := make([][]string, len(docs))
	var ts []string
	for i, d := range docs {
		s.docs[i] = segDoc[T]{value: d.Value, weight: d.Weight, effect: d.Effect}
		if d.Weight <= 0 {
			s.docs[i].weight = 1
		}
		clear(local)
		tfs = tfs[:0]
		for f := Field(0); f < NumFields; f++ {
			ts = appendTerms(ts[:0], d.Fields[f], surface)
			if f == Name || f == Summary {
				gist[i] = append(gist[i], ts...)
			}
			s.docs[i].lens[f] = uint16(min(len(ts), math.MaxUint16))
			s.total[f] += len(ts)
			for _, t := range ts {
				j, ok := local[t]
				if !ok {
					j = len(tfs)
					local[t] = j
					tfs = append(tfs, termTF{term: t})
				}
				if tfs[j].tf[f] < math.MaxUint16 {
					tfs[j].tf[f]++
				}
			}
		}
		for _, x := range tfs {
			s.post[x.term] = append(s.post[x.term], posting{doc: int32(i), tf: x.tf})
		}
	}
	s.vocab = slices.Sorted(maps.Keys(s.post)) // sorted for determinism
	s.roots = map[string][]string{}
	for _, t := range s.vocab {
		if r := root(t); r != t {
			s.roots[r] = append(s.roots[r], t)
		}
	}
	vec := map[string]int32{}
	for _, t := range s.vocab {
		if v := vector(surface[t], t); v.Ok() {
			vec[t] = int32(len(s.vecTerms))
			s.vecTerms = append(s.vecTerms, t)
			s.vecs = append(s.vecs, v)
		}
	}
	for i, g := range gist {
		for _, t := range g {
			if j, ok := vec[t]; ok {
				s.docs[i].gist = append(s.docs[i].gist, j)
			}
		}
	}
	return s
}

// vector is the word vector of word, else of its stem (a stem that is
// not a word has none).
func vector(word, stem string) wordvec.Vec {
	if v := wordvec.Lookup(word); v.Ok() {
		return v
	}
	return wordvec.Lookup(stem)
}

func unit(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return nil
	}
	k := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= k
	}
	return v
}

func dot(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	var s float32
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// queryDense is the query's meaning, as dense is a document's.
func (ix *Index[T]) queryDense(cs []concept) []float32 {
	var acc []float32
	for _, c := range cs {
		if c.soft {
			continue
		}
		v := vector(c.word, c.variants[0].term)
		if !v.Ok() {
			continue
		}
		if acc == nil {
			acc = make([]float32, v.Dim())
		}
		v.AddTo(acc, float32(ix.idf(c.variants[0].term)))
	}
	return unit(acc)
}

// Index is a set of named segments searched as one. It is immutable and
// safe for concurrent use.
type Index[T any] struct {
	names []string // sorted
	segs  []*Segment[T]
	n     int
	avg   [NumFields]float64
	// dense is each document's meaning, per segment: the mean of the unit
	// vectors of its name's and summary's words weighted by their idf in
	// the whole index, itself of unit length (nil when none has a
	// vector). It is made on the first search, from the statistics of
	// the whole index.
	dense     [][][]float32
	denseOnce sync.Once
}

// With returns an index in which the segment named name is seg (added,
// or replacing the one of that name); a nil seg removes it. The other
// segments are shared, not copied.
func (ix *Index[T]) With(name string, seg *Segment[T]) *Index[T] {
	out := &Index[T]{}
	if ix != nil {
		out.names = make([]string, 0, len(ix.names)+1)
		out.segs = make([]*Segment[T], 0, len(ix.segs)+1)
		for i, n := range ix.names {
			if n != name {
				out.names = append(out.names, n)
				out.segs = append(out.segs, ix.segs[i])
			}
		}
	}
	if seg != nil {
		i := sort.SearchStrings(out.names, name)
		out.names = slices.Insert(out.names, i, name)
		out.segs = slices.Insert(out.segs, i, seg)
	}
	var total [NumFields]int
	for _, s := range out.segs {
		out.n += len(s.docs)
		for f := range total {
			total[f] += s.total[f]
		}
	}
	for f := range total {
		if out.n > 0 {
			out.avg[f] = float64(total[f]) / float64(out.n)
		}
	}
	return out
}

// makeDense fills ix.dense (see Index).
func (ix *Index[T]) makeDense() {
	ix.dense = make([][][]float32, len(ix.segs))
	for si, s := range ix.segs {
		idf := make([]float32, len(s.vecTerms))
		for j, t := range s.vecTerms {
			idf[j] = float32(ix.idf(t))
		}
		ix.dense[si] = make([][]float32, len(s.docs))
		for i, d := range s.docs {
			if len(d.gist) == 0 {
				continue
			}
			acc := make([]float32, s.vecs[d.gist[0]].Dim())
			for _, j := range d.gist {
				s.vecs[j].AddTo(acc, idf[j])
			}
			ix.dense[si][i] = unit(acc)
		}
	}
}

// Hit is one document found, with its score.
type Hit[T any] struct {
	Value T
	Score float64
}

// Search scores every document against q and returns the matching ones,
// best first (ties in index order: by segment name, then document order);
// a query without words matches every document with score 1.
func (ix *Index[T]) Search(q string) []Hit[T] {
	if ix == nil || ix.n == 0 {
		return nil
	}
	qr := parseQuery(q, func(term string) bool { return ix.df(term) > 0 })
	concepts := qr.concepts
	if len(concepts) == 0 {
		out := make([]Hit[T], 0, ix.n)
		for _, s := range ix.segs {
			for _, d := range s.docs {
				out = append(out, Hit[T]{Value: d.value, Score: 1})
			}
		}
		return out
	}
	// Per document: the score so far and the concepts it matched.
	base := make([]int, len(ix.segs))
	for i := 1; i < len(ix.segs); i++ {
		base[i] = base[i-1] + len(ix.segs[i-1].docs)
	}
	score := make([]float64, ix.n)
	matched := make([]uint16, ix.n)
	best := make([]float64, ix.n)      // this concept's best contribution
	nameHit := make([]float64, ix.n)   // this concept's best weight on a name term
	nameWords := make([]float64, ix.n) // name words matched, weighted
	var touched []int32
	expanded := make([][]variant, len(concepts))
	words := 0.0 // the query's words something in the index stands for
	for i, c := range concepts {
		expanded[i] = ix.expand(c)
		if !c.soft && len(expanded[i]) > 0 {
			words++
		}
	}
	for ci, c := range concepts {
		touched = touched[:0]
		// A synonym weighs no more than the word itself would: its idf is
		// at most the word's (when documents have the word).
		maxIDF := math.Inf(1)
		if ix.df(c.variants[0].term) > 0 && !c.soft {
			maxIDF = ix.idf(c.variants[0].term)
		}
		for _, v := range expanded[ci] {
			idf := min(ix.idf(v.term), maxIDF)
			for si, s := range ix.segs {
				for _, p := range s.post[v.term] {
					d := int32(base[si]) + p.doc
					w := 0.0
					for f := Field(0); f < NumFields; f++ {
						if p.tf[f] == 0 {
							continue
						}
						norm := 1 - fieldB[f] + fieldB[f]*float64(s.docs[p.doc].lens[f])/max(ix.avg[f], 1)
						w += fieldWeight[f] * float64(p.tf[f]) / norm
					}
					contrib := v.weight * idf * w / (k1 + w)
					if best[d] == 0 {
						touched = append(touched, d)
					}
					best[d] = max(best[d], contrib)
					if p.tf[Name] > 0 {
						nameHit[d] = max(nameHit[d], v.weight)
					}
				}
			}
		}
		for _, d := range touched {
			score[d] += best[d]
			nameWords[d] += nameHit[d]
			if !c.soft {
				matched[d]++
			}
			best[d], nameHit[d] = 0, 0
		}
	}
	ix.denseOnce.Do(ix.makeDense)
	qd := ix.queryDense(concepts)
	var out []Hit[T]
	for si, s := range ix.segs {
		for i, doc := range s.docs {
			d := base[si] + i
			if matched[d] == 0 {
				continue // only soft concepts matched
			}
			cover := 1 - coverageWeight + coverageWeight*float64(matched[d])/words
			if n := doc.lens[Name]; n > 0 {
				cover *= 1 + nameBoost*min(1, nameWords[d]/float64(n))
			}
			if qd != nil {
				cover *= 1 + denseWeight*max(0, float64(dot(qd, ix.dense[si][i]))-denseFloor)
			}
			if qr.mood != Unknown && doc.effect != Unknown && doc.effect != qr.mood {
				cover *= moodMismatch[qr.mood]
			}
			out = append(out, Hit[T]{Value: doc.value, Score: score[d] * cover * doc.weight})
		}
	}
	sortHits(out)
	return out
}

// sortHits orders hits best first, equal scores in the order hs has them.
// It sorts positions rather than sorting hs stably: a stable sort of the
// hundreds of hits a query matches cost a fifth of a search.
func sortHits[T any](hs []Hit[T]) {
	order := make([]int32, len(hs))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(i, j int32) int {
		if c := cmp.Compare(hs[j].Score, hs[i].Score); c != 0 {
			return c
		}
		return cmp.Compare(i, j)
	})
	sorted := make([]Hit[T], len(hs))
	for k, i := range order {
		sorted[k] = hs[i]
	}
	copy(hs, sorted)
}

// expand returns the variants of c to look up: those some document holds
// and, for the query word itself (not a soft concept), the indexed terms
// of its root, and the terms it begins when no document holds it. The
// root's terms and the prefix's are found by the word's form alone,
// whatever it means: they weigh less than the word.
func (ix *Index[T]) expand(c concept) []variant {
	out := make([]variant, 0, len(c.variants))
	for _, v := range c.variants {
		if ix.df(v.term) > 0 {
			out = append(out, v)
		}
	}
	w := c.variants[0].term
	if c.soft || len(w) < 3 {
		return out
	}
	add := func(terms []string, weight float64) {
		for _, t := range terms {
			is := func(v variant) bool { return v.term == t }
			if !slices.ContainsFunc(c.variants, is) && !slices.ContainsFunc(out, is) {
				out = append(out, variant{t, weight})
			}
		}
	}
	if ix.df(w) == 0 {
		add(ix.withPrefix(w, maxPrefixTerms), prefixWeight)
	}
	add(ix.withRoot(root(w)), rootWeight)
	return out
}

// withPrefix returns the first n indexed terms, in order, that begin with
// prefix.
func (ix *Index[T]) withPrefix(prefix string, n int) []string {
	var out []string
	for _, s := range ix.segs {
		i := sort.SearchStrings(s.vocab, prefix)
		for ; i < len(s.vocab) && strings.HasPrefix(s.vocab[i], prefix); i++ {
			out = append(out, s.vocab[i])
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return out[:min(n, len(out))]
}

// withRoot returns the indexed terms whose root is r, in order.
func (ix *Index[T]) withRoot(r string) []string {
	var out []string
	if ix.df(r) > 0 {
		out = append(out, r)
	}
	for _, s := range ix.segs {
		out = append(out, s.roots[r]...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// df is the number of documents holding term.
func (ix *Index[T]) df(term string) int {
	n := 0
	for _, s := range ix.segs {
		n += len(s.post[term])
	}
	return n
}

// idf is BM25's inverse document frequency (never negative).
func (ix *Index[T]) idf(term string) float64 {
	df := float64(ix.df(term))
	return math.Log(1 + (float64(ix.n)-df+0.5)/(df+0.5))
}
