package truncate

import (
	"encoding/json"

	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
)

// encode writes n as compact JSON, strings escaped as encoding/json escapes
// them, so its length in characters is n.size.
func encode(n *node) json.RawMessage {
	return appendNode(make([]byte, 0, n.size+n.size/4), n)
}

// encodeLogs returns the lines of a logs node, its marker last.
func encodeLogs(n *node) []string {
	out := make([]string, 0, len(n.kids)+1)
	for _, k := range n.kids {
		out = append(out, k.text)
	}
	if n.dropped > 0 {
		out = append(out, n.markerValue(n.dropped))
	}
	return out
}

func appendNode(b []byte, n *node) []byte {
	switch n.kind {
	case kindLit, kindNum:
		return append(b, n.text...)
	case kindStr:
		return jsontext.AppendString(b, n.text)
	}
	// An array, object or logs node: its kids, then its marker entry.
	obj := n.kind == kindObj
	open, end := byte('['), byte(']')
	if obj {
		open, end = '{', '}'
	}
	b = append(b, open)
	for i, k := range n.kids {
		if i > 0 {
			b = append(b, ',')
		}
		if obj {
			b = append(jsontext.AppendString(b, n.keys[i]), ':')
		}
		b = appendNode(b, k)
	}
	if n.dropped > 0 {
		if len(n.kids) > 0 {
			b = append(b, ',')
		}
		if obj {
			b = append(jsontext.AppendString(b, n.markerKey), ':')
		}
		b = jsontext.AppendString(b, n.markerValue(n.dropped))
	}
	return append(b, end)
}
