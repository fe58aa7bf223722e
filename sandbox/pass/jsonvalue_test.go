package pass

import (
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// jsonDumpSource describes a value exactly: types, -0, the UTF-16 code
// units of strings, prototypes, own property names in order with their
// attributes.
const jsonDumpSource = `(function dump(v) {
	if (v === null) return "null";
	switch (typeof v) {
	case "number": return Object.is(v, -0) ? "-0" : "n" + String(v);
	case "boolean": return String(v);
	case "string": {
		const units = [];
		for (let i = 0; i < v.length; i++) units.push(v.charCodeAt(i));
		return "s(" + units.join(",") + ")";
	}
	case "object": {
		if (Array.isArray(v)) {
			const proto = Object.getPrototypeOf(v) === Array.prototype ? "" : "!proto";
			return "[" + v.map(dump).join(",") + "]" + proto + Object.getOwnPropertyNames(v).length;
		}
		const proto = Object.getPrototypeOf(v) === Object.prototype ? "" : "!proto";
		return "{" + Object.getOwnPropertyNames(v).map(k => {
			const d = Object.getOwnPropertyDescriptor(v, k);
			const flags = (d.writable ? "w" : "") + (d.enumerable ? "e" : "") + (d.configurable ? "c" : "");
			return JSON.stringify(k) + flags + ":" + dump(d.value);
		}).join(",") + "}" + proto;
	}
	}
	return "?" + typeof v;
})`

// jsonParseCheck compares jsonValue with the VM's JSON.parse.
type jsonParseCheck struct {
	vm    *goja.Runtime
	dump  goja.Callable
	parse goja.Callable
}

func newJSONParseCheck(t testing.TB) *jsonParseCheck {
	t.Helper()
	vm := goja.New()
	dv, err := vm.RunString(jsonDumpSource)
	if err != nil {
		t.Fatal(err)
	}
	dump, _ := goja.AssertFunction(dv)
	parse, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
	return &jsonParseCheck{vm: vm, dump: dump, parse: parse}
}

// check returns the dumps of both parses ("" when one did not parse) and
// whether jsonValue declined.
func (c *jsonParseCheck) check(t testing.TB, raw string) (fast, slow string, declined bool) {
	t.Helper()
	if v, err := c.parse(goja.Undefined(), c.vm.ToValue(raw)); err == nil {
		d, err := c.dump(goja.Undefined(), v)
		if err != nil {
			t.Fatalf("dump %q: %v", raw, err)
		}
		slow = d.String()
	}
	v, ok := jsonValue(c.vm, []byte(raw))
	if !ok {
		return "", slow, true
	}
	d, err := c.dump(goja.Undefined(), v)
	if err != nil {
		t.Fatalf("dump %q: %v", raw, err)
	}
	return d.String(), slow, false
}

func TestJSONValueMatchesJSONParse(t *testing.T) {
	c := newJSONParseCheck(t)
	valid := []string{
		`{"ok":true}`, `true`, `false`, `null`, `0`, `-0`, `1`, `-1.5e3`, `1E+2`, `0.1`, `123456789012345678901234567890`,
		`1e-400`, `4.9e-324`, `1.7976931348623157e308`,
		`""`, `"plain"`, `"a\"b\\c\/d\be\ff\ng\rh\ti"`, `"\u0041\u00e9\u4e2d"`, `"é中😀"`, `"\ud83d\ude00"`,
		`"\ud83d"`, `"\ude00"`, `"\ud83dx"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, `"\u003cb\u003e \u0026 \u2028"`,
		"\"\xff\xfe\"", "\"a\xc3\"", "\"\xed\xa0\x80\"", "\"\x7f\"",
		` { "a" : [ 1 , 2 , { } , [ ] ] , "b" : null } `, "\t\r\n[\n1\n]\n",
		`{"a":1,"a":2,"b":3}`, `{"__proto__":{"x":1},"y":2}`, `{"b":1,"2":2,"1":3,"a":4}`, `{"":0}`,
		`{"then":1,"toJSON":2,"constructor":3,"hasOwnProperty":4}`, `[[[[[]]]]]`, `[null,true,false,"x",1.5]`,
		`{"content":[{"type":"text","text":"{\"a\":1}\nline two"}],"isError":false}`,
		strings.Repeat("[", 1000) + strings.Repeat("]", 1000),
		`"` + strings.Repeat("x", 100000) + `"`,
		`[` + strings.Repeat(`{"k":"v","n":1},`, 5000) + `{}]`,
	}
	for _, raw := range valid {
		fast, slow, declined := c.check(t, raw)
		name := raw[:min(len(raw), 40)]
		if slow == "" {
			t.Errorf("JSON.parse(%q) failed: the case is not valid JSON", name)
			continue
		}
		if declined {
			t.Errorf("jsonValue(%q) declined valid JSON", name)
			continue
		}
		if fast != slow {
			t.Errorf("jsonValue(%q) = %.200s, JSON.parse = %.200s", name, fast, slow)
		}
	}
}

func TestJSONValueDeclinesWhatJSONParseRejects(t *testing.T) {
	c := newJSONParseCheck(t)
	invalid := []string{
		``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{'a':1}`, `01`, `1.`, `.5`, `+1`, `-`, `1e`, `1e+`,
		`0x10`, `NaN`, `Infinity`, `tru`, `nul`, `True`, `"abc`, `"a\x"`, `"\u12"`, `"\u12G4"`, "\"a\x01b\"", "\"\t\"",
		`1 2`, `{} {}`, `[1] x`, `1e400`, `-1e400`, "\xef\xbb\xbf1", `[1,,2]`, `{"a":1 "b":2}`, `"\`,
	}
	for _, raw := range invalid {
		fast, slow, declined := c.check(t, raw)
		name := raw[:min(len(raw), 40)]
		if slow != "" {
			t.Errorf("JSON.parse(%q) = %.80s: the case is valid JSON", name, slow)
		}
		if !declined {
			t.Errorf("jsonValue(%q) = %.80s, want declined", name, fast)
		}
	}
	// Nesting past maxJSONDepth is left to JSON.parse, which accepts it.
	deep := strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1)
	if _, slow, declined := c.check(t, deep); !declined || slow == "" {
		t.Errorf("nesting %d: declined %v, JSON.parse ok %v; want declined and parsed", maxJSONDepth+1, declined, slow != "")
	}
}

func FuzzJSONValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",null]}`, `"\ud83d\ude00"`, "\"\xff\"", `-0.5e-3`, `[{},[]]`, `{"__proto__":1}`} {
		f.Add(s)
	}
	c := newJSONParseCheck(f)
	f.Fuzz(func(t *testing.T, raw string) {
		fast, slow, declined := c.check(t, raw)
		switch {
		case declined && slow != "" && jsonDepth(raw) <= maxJSONDepth:
			// Only nesting past maxJSONDepth may be declined while
			// JSON.parse accepts it.
			t.Errorf("jsonValue(%q) declined what JSON.parse accepts: %.200s", raw, slow)
		case !declined && slow == "":
			t.Errorf("jsonValue(%q) = %.200s, JSON.parse rejects it", raw, fast)
		case !declined && fast != slow:
			t.Errorf("jsonValue(%q) = %.200s, JSON.parse = %.200s", raw, fast, slow)
		}
	})
}

// jsonDepth is the deepest nesting of arrays and objects in raw.
func jsonDepth(raw string) int {
	depth, deepest, inStr := 0, 0, false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case !inStr && (c == '[' || c == '{'):
			depth++
			deepest = max(deepest, depth)
		case !inStr && (c == ']' || c == '}'):
			depth--
		}
	}
	return deepest
}
