package wordvec

// What the tests measure the embedded table with; search itself only
// looks words up (Lookup) and adds their vectors (AddTo).

// Cos is the cosine similarity of a and b (0 when either is no vector).
func Cos(a, b Vec) float32 {
	if a.v == nil || b.v == nil || len(a.v) != len(b.v) {
		return 0
	}
	var dot int32
	bv := b.v[:len(a.v)]
	for i, x := range a.v {
		dot += int32(int8(x)) * int32(int8(bv[i]))
	}
	return float32(dot) / (a.norm * b.norm)
}

// Word returns the word of rank i (0 ≤ i < Len()), most frequent first.
func Word(i int) string {
	for w, r := range load().index {
		if int(r) == i {
			return w
		}
	}
	return ""
}

// Rank is word's place in GloVe's vocabulary, most frequent first (0 is
// "the"), or -1 when it has no vector.
func Rank(word string) int {
	i, ok := load().index[word]
	if !ok {
		return -1
	}
	return int(i)
}

// Len is the number of words that have vectors.
func Len() int { return len(load().index) }
