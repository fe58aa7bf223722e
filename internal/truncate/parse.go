package truncate

import (
	"strconv"

	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
)

// maxDepth bounds nesting, as encoding/json does; deeper input is treated
// as not JSON.
const maxDepth = 10000

// parseOrString parses raw, keeping key order and measuring as it goes, or
// when it is not valid JSON makes a string of its text.
func parseOrString(raw []byte) *node {
	n, ok := jsontext.Parse[*node](raw, maxDepth, nodes{})
	if !ok {
		return stringNode(string(raw))
	}
	return n
}

// nodes builds measured nodes; numbers keep their text.
type nodes struct{}

func (nodes) Null() *node           { return litNode(kindLit, "null") }
func (nodes) String(s string) *node { return stringNode(s) }
func (nodes) Array(kids []*node) *node {
	n := &node{kind: kindArr, kids: kids}
	n.measureSeq()
	return n
}

func (nodes) Bool(b bool) *node { return litNode(kindLit, strconv.FormatBool(b)) }

func (nodes) Number(text []byte) (*node, bool) { return litNode(kindNum, string(text)), true }

func (nodes) Object(keys []string, kids []*node) (*node, bool) {
	n := &node{kind: kindObj, keys: keys, kids: kids, keySizes: make([]int, len(keys))}
	for i, k := range keys {
		n.keySizes[i] = strSize(k) + 1
	}
	n.markerKey = objectMarkerKey(n.keys)
	n.measureSeq()
	return n, true
}
