package source

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/token"
)

// staticInfo is what the program's syntax tree says before it runs.
type staticInfo struct {
	calls []sandbox.StaticCall
	// roots maps a global name used as X.y(…) or X["y"](…) to the first
	// place it is so used, for names the program does not declare.
	roots map[string]Place
	// dashed are the X.a-b(…) of the program (see dashedCall).
	dashed []sandbox.StaticCall
}

// Place is a line and column in the model's source (1-based; the column in
// UTF-16 units).
type Place struct{ Line, Col int }

// maxStaticCalls and maxLiteralDepth bound what is collected from one
// program.
const (
	maxStaticCalls  = 1000
	maxLiteralDepth = 16
)

// collectStatic walks the final program's syntax tree (prg, of a
// Normalized whose position map is pm) for static calls: calls whose
// callee is a chain of names starting with a global the program does not
// declare itself (anything it declares, anywhere, is left alone).
func collectStatic(prg *ast.Program, pm *positionMap) staticInfo {
	declared := map[string]bool{}
	walkAST(reflect.ValueOf(prg), func(n any) {
		switch n := n.(type) {
		case *ast.Binding:
			collectNames(n.Target, declared)
		case *ast.FunctionLiteral:
			if n.Name != nil {
				declared[n.Name.Name.String()] = true
			}
		case *ast.ClassLiteral:
			if n.Name != nil {
				declared[n.Name.Name.String()] = true
			}
		case *ast.CatchStatement:
			if n.Parameter != nil {
				collectNames(n.Parameter, declared)
			}
		}
	})
	info := staticInfo{roots: map[string]Place{}}
	pos := func(idx file.Idx) (int, int) {
		l, c, _ := pm.at(int(idx) - 1)
		return l, c
	}
	walkAST(reflect.ValueOf(prg), func(n any) {
		if b, ok := n.(*ast.BinaryExpression); ok && len(info.dashed) < maxStaticCalls {
			if path, at := dashedCall(b); len(path) >= 2 && !declared[path[0]] {
				if line, col := pos(at); line != 0 {
					info.dashed = append(info.dashed, sandbox.StaticCall{Connector: strings.Join(path[:len(path)-1], "."), Method: path[len(path)-1], Line: line, Col: col})
				}
			}
			return
		}
		call, ok := n.(*ast.CallExpression)
		if !ok || len(info.calls) >= maxStaticCalls {
			return
		}
		path, at, rootAt := calleePath(call.Callee)
		if len(path) < 2 || declared[path[0]] {
			return
		}
		line, col := pos(at)
		if line == 0 {
			return // the wrapper's own code
		}
		if _, seen := info.roots[path[0]]; !seen {
			rl, rc := pos(rootAt)
			info.roots[path[0]] = Place{rl, rc}
		}
		sc := sandbox.StaticCall{Connector: strings.Join(path[:len(path)-1], "."), Method: path[len(path)-1], Line: line, Col: col}
		if len(call.ArgumentList) > 0 {
			if _, isObj := call.ArgumentList[0].(*ast.ObjectLiteral); isObj {
				sc.Args = literalOf(call.ArgumentList[0], pos, 0)
			}
		}
		info.calls = append(info.calls, sc)
	})
	return info
}

// calleePath returns the names of a callee written as a chain of names
// (a.b.c, a["b"].c, a?.b), where its last name is and where its first;
// nil otherwise.
func calleePath(e ast.Expression) ([]string, file.Idx, file.Idx) {
	var path []string
	var at file.Idx
	for {
		switch x := e.(type) {
		case *ast.OptionalChain:
			e = x.Expression
			continue
		case *ast.Optional:
			e = x.Expression
			continue
		case *ast.DotExpression:
			if at == 0 {
				at = x.Identifier.Idx
			}
			path = append(path, x.Identifier.Name.String())
			e = x.Left
			continue
		case *ast.BracketExpression:
			s, ok := x.Member.(*ast.StringLiteral)
			if !ok {
				return nil, 0, 0
			}
			if at == 0 {
				at = s.Idx
			}
			path = append(path, s.Value.String())
			e = x.Left
			continue
		case *ast.Identifier:
			path = append(path, x.Name.String())
			slices.Reverse(path)
			return path, at, x.Idx
		}
		return nil, 0, 0
	}
}

// dashedCall reads b as a method name written with '-', as a downstream
// may spell it: everything.get-sum(…) parses as everything.get - sum(…),
// and get-all-items as get - all - items. It returns the path with the
// dashed name last (["everything", "get-sum"]) and where that name starts,
// or nil.
func dashedCall(b *ast.BinaryExpression) ([]string, file.Idx) {
	var words []string
	var e ast.Expression = b
	for {
		x, ok := e.(*ast.BinaryExpression)
		if !ok || x.Operator != token.MINUS {
			break
		}
		r := x.Right
		if c, ok := r.(*ast.CallExpression); ok && len(words) == 0 {
			r = c.Callee // only the last word is called
		}
		id, ok := r.(*ast.Identifier)
		if !ok {
			return nil, 0
		}
		words = append(words, id.Name.String())
		e = x.Left
	}
	if a, ok := e.(*ast.AwaitExpression); ok {
		e = a.Argument // await binds tighter than '-'
	}
	path, at, _ := calleePath(e)
	if len(path) < 2 {
		return nil, 0
	}
	slices.Reverse(words)
	path[len(path)-1] += "-" + strings.Join(words, "-")
	return path, at
}

// literalOf describes an expression as a Literal.
func literalOf(e ast.Expression, pos func(file.Idx) (int, int), depth int) *sandbox.Literal {
	l := &sandbox.Literal{}
	l.Line, l.Col = pos(e.Idx0())
	if depth > maxLiteralDepth {
		return l
	}
	switch x := e.(type) {
	case *ast.StringLiteral:
		l.Kind = "string"
		l.Value, _ = json.Marshal(x.Value.String())
	case *ast.TemplateLiteral:
		l.Kind = "string"
		if x.Tag == nil && len(x.Expressions) == 0 && len(x.Elements) == 1 {
			l.Value, _ = json.Marshal(x.Elements[0].Parsed.String())
		} else if x.Tag != nil {
			l.Kind = ""
		}
	case *ast.NumberLiteral:
		l.Kind = "number"
		l.Value = numberJSON(x.Value, false)
	case *ast.UnaryExpression:
		if n, ok := x.Operand.(*ast.NumberLiteral); ok && x.Operator.String() == "-" && !x.Postfix {
			l.Kind = "number"
			l.Value = numberJSON(n.Value, true)
		}
	case *ast.BooleanLiteral:
		l.Kind = "boolean"
		l.Value = json.RawMessage(strconv.FormatBool(x.Value))
	case *ast.NullLiteral:
		l.Kind = "null"
		l.Value = json.RawMessage("null")
	case *ast.ArrayLiteral:
		l.Kind = "array"
		static := true
		for _, it := range x.Value {
			if _, spread := it.(*ast.SpreadElement); it == nil || spread { // a hole or a spread
				l.Items = append(l.Items, nil)
				static = false
				continue
			}
			item := literalOf(it, pos, depth+1)
			static = static && item.Value != nil
			l.Items = append(l.Items, item)
		}
		if static {
			l.Value = joinJSON('[', ']', len(l.Items), func(i int) (string, json.RawMessage) { return "", l.Items[i].Value })
		}
	case *ast.ObjectLiteral:
		l.Kind = "object"
		static := true
		for _, p := range x.Value {
			switch p := p.(type) {
			case *ast.PropertyKeyed:
				key, ok := propertyKey(p)
				if !ok || p.Kind != ast.PropertyKindValue {
					l.Open = true
					static = false
					continue
				}
				v := literalOf(p.Value, pos, depth+1)
				static = static && v.Value != nil
				lp := sandbox.LiteralProp{Key: key, Value: v}
				lp.Line, lp.Col = pos(p.Key.Idx0())
				l.Props = append(l.Props, lp)
			case *ast.PropertyShort:
				static = false
				lp := sandbox.LiteralProp{Key: p.Name.Name.String(), Value: &sandbox.Literal{}}
				lp.Line, lp.Col = pos(p.Name.Idx)
				lp.Value.Line, lp.Value.Col = lp.Line, lp.Col
				l.Props = append(l.Props, lp)
			default: // a spread
				l.Open = true
				static = false
			}
		}
		if static {
			l.Value = joinJSON('{', '}', len(l.Props), func(i int) (string, json.RawMessage) { return l.Props[i].Key, l.Props[i].Value.Value })
		}
	}
	return l
}

// propertyKey returns the key of a property written as a name, a string
// or a number.
func propertyKey(p *ast.PropertyKeyed) (string, bool) {
	if p.Computed {
		if s, ok := p.Key.(*ast.StringLiteral); ok {
			return s.Value.String(), true
		}
		return "", false
	}
	switch k := p.Key.(type) {
	case *ast.StringLiteral:
		return k.Value.String(), true
	case *ast.Identifier:
		return k.Name.String(), true
	case *ast.NumberLiteral:
		return strings.Trim(string(numberJSON(k.Value, false)), `"`), true
	}
	return "", false
}

// numberJSON is the JSON of a number literal's value (nil when JSON
// cannot hold it).
func numberJSON(v any, negate bool) json.RawMessage {
	var f float64
	switch n := v.(type) {
	case int64:
		f = float64(n)
	case float64:
		f = n
	default:
		return nil
	}
	if negate {
		f = -f
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil
	}
	return json.RawMessage(strconv.FormatFloat(f, 'g', -1, 64))
}

// joinJSON builds a JSON array (key "") or object from n parts.
func joinJSON(open, closing byte, n int, part func(int) (string, json.RawMessage)) json.RawMessage {
	b := []byte{open}
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		k, v := part(i)
		if open == '{' {
			kb, _ := json.Marshal(k)
			b = append(append(b, kb...), ':')
		}
		b = append(b, v...)
	}
	return append(b, closing)
}

// collectNames adds the names a binding target declares (an identifier,
// or every identifier in a destructuring pattern: over-collecting only
// leaves more calls unchecked).
func collectNames(t ast.BindingTarget, into map[string]bool) {
	walkAST(reflect.ValueOf(t), func(n any) {
		if id, ok := n.(*ast.Identifier); ok {
			into[id.Name.String()] = true
		}
	})
}

var (
	astNode     = reflect.TypeFor[ast.Node]()
	bindingType = reflect.TypeFor[*ast.Binding]()
	astPkg      = reflect.TypeFor[ast.Program]().PkgPath()
)

// walkAST visits every node of goja's syntax tree under v, depth first, in
// field order. goja's ast package has no walker: this one follows, by
// reflection, every field that holds nodes (interfaces, pointers to the
// package's structs, slices of either).
func walkAST(v reflect.Value, visit func(any)) {
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			walkAST(v.Elem(), visit)
		}
	case reflect.Pointer:
		if v.IsNil() || v.Elem().Kind() != reflect.Struct || v.Elem().Type().PkgPath() != astPkg {
			return
		}
		walkAST(v.Elem(), visit)
	case reflect.Struct:
		if v.Type().PkgPath() != astPkg {
			return
		}
		if v.CanAddr() {
			if p := v.Addr(); p.Type().Implements(astNode) || p.Type() == bindingType {
				visit(p.Interface())
			}
		}
		for i := range v.NumField() {
			walkAST(v.Field(i), visit)
		}
	case reflect.Slice:
		for i := range v.Len() {
			walkAST(v.Index(i), visit)
		}
	}
}
