package pass

import (
	"strconv"

	"github.com/dop251/goja"

	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
)

// maxJSONDepth is the nesting depth past which jsonValue leaves a value to
// JSON.parse.
const maxJSONDepth = 1000

// jsonValue builds the JavaScript value of the JSON text raw directly in
// vm, without calling into JavaScript: it is what the VM's JSON.parse
// returns for the same text (plain objects whose properties are defined
// in document order, the last of duplicate keys winning, "__proto__" an
// own property; numbers as float64; strings decoded as encoding/json
// decodes them, with U+FFFD for invalid UTF-8 and lone surrogates), but
// without JSON.parse's tokenizer, which allocates for every token. ok is
// false for text it leaves to JSON.parse: anything that is not valid JSON
// (so that the error is JSON.parse's own), numbers out of float64's range
// and nesting deeper than maxJSONDepth. It must run on the VM goroutine.
func jsonValue(vm *goja.Runtime, raw []byte) (v goja.Value, ok bool) {
	return jsontext.Parse[goja.Value](raw, maxJSONDepth, vmValues{vm})
}

// vmValues builds JSON values in a VM.
type vmValues struct{ vm *goja.Runtime }

func (b vmValues) Null() goja.Value           { return goja.Null() }
func (b vmValues) Bool(v bool) goja.Value     { return b.vm.ToValue(v) }
func (b vmValues) String(s string) goja.Value { return b.vm.ToValue(s) }

func (b vmValues) Number(text []byte) (goja.Value, bool) {
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		return nil, false // out of range: JSON.parse reports it
	}
	return b.vm.ToValue(f), true
}

func (b vmValues) Array(items []goja.Value) goja.Value {
	values := make([]any, len(items))
	for i, v := range items {
		values[i] = v
	}
	return b.vm.NewArray(values...)
}

func (b vmValues) Object(keys []string, values []goja.Value) (goja.Value, bool) {
	obj := b.vm.NewObject()
	for i, key := range keys {
		// A data property defined, not assigned: no setter of the
		// prototype chain runs, and "__proto__" is an own property, as
		// JSON.parse has it.
		if err := obj.DefineDataProperty(key, values[i], goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
			return nil, false
		}
	}
	return obj, true
}
