package sandbox

import (
	"context"
	"encoding/json"
)

// Problem is one thing the check found wrong, where it is in the model's
// source.
type Problem struct {
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	Message string `json:"message"`
}

// Checker is implemented by hosts that check a program's static calls
// against the connectors before it runs: that every method exists, and
// that object-literal arguments fit the method's input (missing required
// properties, unknown properties, constants of the wrong type). Check
// reports every problem it finds; an error is an internal failure. It is
// called once per pass, before the program's first statement, and must
// not call any connector.
type Checker interface {
	Check(ctx context.Context, calls []StaticCall) ([]Problem, error)
}

// StaticCall is a connector call whose connector and method are written
// out in the program (github.issues_create({…})), found in its syntax tree
// before it runs. Line and Col locate the method's name in the model's
// own source (1-based; Col in UTF-16 units).
type StaticCall struct {
	Connector string `json:"connector"` // dotted for a nested object (github.issues)
	Method    string `json:"method"`
	Line      int    `json:"line"`
	Col       int    `json:"col"`
	// Args is the first argument when it is an object literal.
	Args *Literal `json:"args,omitempty"`
}

// Literal is what the syntax tree says of a value written in the program:
// its JavaScript type when that is known, its JSON value when it is a
// constant, its properties or items when it is an object or array
// literal.
type Literal struct {
	// Kind is "object", "array", "string", "number", "boolean" or "null",
	// or "" when the type is not known before running (a variable, a
	// call).
	Kind string `json:"kind,omitempty"`
	// Value is the JSON of a constant (of a string, number, boolean or
	// null literal; of an object or array literal made only of constants).
	Value json.RawMessage `json:"value,omitempty"`
	// Props are an object literal's properties with a written key, in
	// order; Open is set when it has others too (spread, computed keys).
	Props []LiteralProp `json:"props,omitempty"`
	Open  bool          `json:"open,omitempty"`
	// Items are an array literal's elements (nil for a spread or a hole).
	Items []*Literal `json:"items,omitempty"`
	Line  int        `json:"line"`
	Col   int        `json:"col"`
}

// LiteralProp is one property of an object literal; Line and Col locate
// its key.
type LiteralProp struct {
	Key   string   `json:"key"`
	Value *Literal `json:"value"`
	Line  int      `json:"line"`
	Col   int      `json:"col"`
}
