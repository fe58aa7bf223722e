package pass

import (
	"testing"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/internal/sandboxtest"
)

// TestArgumentSerialisation covers what connector methods send: the JSON
// form of a plain object, and the errors for anything else.
func TestArgumentSerialisation(t *testing.T) {
	tests := []struct{ name, code, want string }{
		{"nested", "(await notes.createNote({ a: [1, { b: 'é' }], n: null })).args", `{"a":[1,{"b":"é"}],"n":null}`},
		{"own toJSON", "(await notes.createNote({ toJSON() { return { x: 1 } } })).args", `{"x":1}`},
		{"toJSON to undefined", "try { notes.createNote({ toJSON() {} }) } catch (e) { return String(e) }",
			`"TypeError: notes.createNote expects one object argument; its JSON form is undefined"`},
		{"toJSON to an array", "try { notes.createNote({ toJSON() { return [1] } }) } catch (e) { return String(e) }",
			`"TypeError: notes.createNote expects one object argument; its JSON form is [1]"`},
		{"BigInt", "try { notes.createNote({ n: 1n }) } catch (e) { return e instanceof TypeError }", `true`},
		{"proxy of an object", "(await notes.createNote(new Proxy({ a: 1 }, {}))).args", `{"a":1}`},
		{"function", "try { notes.createNote(() => 1) } catch (e) { return String(e) }",
			`"TypeError: notes.createNote expects one object argument, got function"`},
		{"undefined", "(await notes.createNote(undefined)).args", `{}`},
		{"getter runs once", "let n = 0; const a = { get x() { return ++n } };\nconst r = await notes.createNote(a);\n[r.args, n]", `[{"x":1},1]`},
	}
	e := newExecutor(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sandboxtest.WantCompleted(t, tc.code, sandboxtest.Run(t, e, &sandboxtest.Host{}, tc.code, sandbox.Limits{}), tc.want)
		})
	}
}

// TestConnectorMethodForms: a method read from the connector object (made
// in JavaScript), the target's own function (reached through its property
// descriptor) and a detached method all make the same call; a method the
// program replaces is the program's.
func TestConnectorMethodForms(t *testing.T) {
	tests := []struct{ name, code, want string }{
		{"read twice is the same function", "notes.createNote === notes.createNote", `true`},
		{"detached", "const f = notes.createNote;\nconst r = await f({ a: 1 });\n[r.seq, r.method, r.args]", `[1,"createNote",{"a":1}]`},
		{"own function", "const f = Object.getOwnPropertyDescriptor(notes, 'createNote').value;\nconst r = await f({ a: [1] });\n[r.seq, r.method, r.args]", `[1,"createNote",{"a":[1]}]`},
		{"own function rejects the same", "const f = Object.getOwnPropertyDescriptor(notes, 'createNote').value;\ntry { f([1]) } catch (e) { return String(e) }",
			`"TypeError: notes.createNote expects one object argument, got array"`},
		{"replaced", "notes.createNote = () => 'mine';\nnotes.createNote({})", `"mine"`},
		{"deleted", "delete notes.createNote;\ntry { notes.createNote({}) } catch (e) { return e.message }", `"notes.createNote is not a function; did you mean createNote?"`},
		{"seq across forms", "const a = await notes.listNotes({});\nconst b = await Object.getOwnPropertyDescriptor(notes, 'listNotes').value({});\n[a.seq, b.seq]", `[1,2]`},
	}
	e := newExecutor(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sandboxtest.WantCompleted(t, tc.code, sandboxtest.Run(t, e, &sandboxtest.Host{}, tc.code, sandbox.Limits{}), tc.want)
		})
	}
}
