package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// gen keeps the most frequent words of letters a–z only, in order, each
// vector scaled so that its largest component is ±127.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	src := `{"dimensions":3,"words":["the",",","Bob","x","of","cat","dog"],
		"vectors":{"the":[0.5,-1,0.25,9,0],",":[1,1,1,1,1],"Bob":[1,0,0,1,2],"x":[1,0,0,1,3],
		"of":[0,0,0,0,4],"cat":[0.2,0.1,-0.4,1,5],"dog":[1,2,3,4,6]}}`
	if err := os.WriteFile(in, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "vectors.bin")
	if err := run(in, out, 2); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// "," and "Bob" are not words of a–z, "x" is one letter, "of" has a zero
	// vector: the two kept are the and cat.
	words := "the\ncat"
	var want bytes.Buffer
	want.WriteString("WV1\n")
	for _, x := range []uint32{2, 3, uint32(len(words))} {
		binary.Write(&want, binary.LittleEndian, x)
	}
	want.WriteString(words)
	binary.Write(&want, binary.LittleEndian, []int8{64, -127, 32, 64, 32, -127})
	if !bytes.Equal(b, want.Bytes()) {
		t.Errorf("vectors.bin\n got %v\nwant %v", b, want.Bytes())
	}
	if err := run(filepath.Join(dir, "missing.json"), out, 2); err == nil {
		t.Error("a missing source gave no error")
	}
}
