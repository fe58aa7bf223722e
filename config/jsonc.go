package config

import "bytes"

// jsoncToJSON returns data with the comments of JSON with comments (JSONC,
// as VS Code's mcp.json and settings files are written: `// …` to the end
// of a line and `/* … */`) replaced by spaces, and trailing commas before
// `}` or `]` replaced by a space, so that the YAML parser (which reads
// JSON) accepts it. Every byte that is not removed keeps its offset and
// every newline stays, so positions in messages are those of the file.
// Text inside strings is left alone; data that does not begin with `{`
// (after white space) is YAML and returned as is. An unterminated block
// comment is left for the parser to report.
func jsoncToJSON(data []byte) []byte {
	i := len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
	if i == len(data) || data[i] != '{' {
		return data
	}
	out := bytes.Clone(data)
	blank := func(from, to int) {
		for k := from; k < to; k++ {
			if out[k] != '\n' && out[k] != '\r' {
				out[k] = ' '
			}
		}
	}
	lastComma := -1 // offset of a comma seen since the last value byte
	for ; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			lastComma = -1
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			end := i
			for end < len(data) && data[end] != '\n' {
				end++
			}
			blank(i, end)
			i = end - 1
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				return out
			}
			end += i + 2 // the '*' of "*/"
			blank(i, end+2)
			i = end + 1
		case c == ',':
			lastComma = i
		case c == '}' || c == ']':
			if lastComma >= 0 {
				blank(lastComma, lastComma+1)
			}
			lastComma = -1
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		default:
			lastComma = -1
		}
	}
	return out
}
