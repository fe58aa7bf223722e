package source

import (
	"fmt"
	"strings"
)

// MaxNesting is how deep the model's code may nest, MaxChain how long a
// chain of operators it may hold, MaxJoined how many bytes its joins with +
// may copy in all, and MaxFunctions how many functions it may define (see
// checkNesting).
const (
	MaxNesting   = 32
	MaxChain     = 1000
	MaxJoined    = 16 << 20
	MaxFunctions = 10000
)

// checkNesting refuses code that nests deeper than MaxNesting levels, before
// esbuild sees it. esbuild's cost grows with the square of the depth, not
// with the size: its output indents every level (n nested blocks print as
// n² spaces: 4 KB of braces become 8 MB), nested functions cost it time per
// enclosing scope (a thousand nested `a=>` take seconds), and long runs of
// prefix operators recurse in its parser. Normalize cannot be interrupted
// and, in process, runs in the server, so its cost must follow the code's
// size; with the depth bounded it does (a level costs at most a few
// spaces of indentation per output line).
//
// The depth is counted on the code's tokens, skipping strings, comments,
// template text and regular expression literals: each open bracket, brace,
// parenthesis and template substitution is a level; so is the body of an
// arrow function, of if, for, while, with and do when it is not a block
// (a block counts as its brace), until the statement ends (a semicolon, a
// comma, or a line break where a semicolon would be inserted); and each prefix
// operator in a run of them (`!!x`, `typeof await x`); and each
// right-associative operator in a chain (`a = b = c`, `a ** b ** c`,
// `a ? b : c ? d : e`), which esbuild visits by recursion: 128 Ki of them
// passed Go's 1 GB stack, a fatal error that would end the server. The count errs
// high, never low, where the syntax is ambiguous without a parser (a `/`
// after `}` is read as a division, so what follows counts as code).
//
// Chains are bounded apart (MaxChain), since long ones are ordinary code:
// each binary operator (`a + b + c`, `a && b`), member access, call and
// index (`a.b().c[0]`) in an expression is a link, the links of a bracket
// counting on in the expression around it, until the statement ends or a
// comma between arguments, elements, properties or declarations; the
// comma of a sequence (`a, b`) is a link too. goja's compiler walks the left
// side of such a chain again at each link (32 Ki terms of `+` took seconds,
// growing with the square), esbuild's printer walks a sequence's left side
// again at each comma (40,000 commas took 50 s) and esbuild visits member and
// call chains by recursion (a MiB of `.b` passed Go's 1 GB stack: a fatal
// error). A { after an operand, a statement's end or a body's start opens a
// block, whose commas are a sequence's; elsewhere an object's.
//
// esbuild joins what it can at each binary + (`'a' + 'b'`, `{} + 1`, a
// template and a string), copying the whole text joined so far: a MiB
// literal then 999 `+ ""` allocated 2 GB, 40 KB of `${a}` then 999 `+ ""`
// 725 MB (a template's substitutions are copied). So each + is weighed as
// the bytes its expression holds before it, from the innermost bracket or
// separator, and the sum over the code is bounded (MaxJoined).
//
// Functions are counted (MaxFunctions): esbuild allocates 3 KB for each,
// more when nested (a MiB of `a => 1` took 670 MB, a MiB of arrows 30 deep
// 1.7 GB). Each `=>` is one, and each { after a ) that is not an if's,
// for's, while's or with's, or after a return type following such a )
// (a function's, a method's, but also a catch's).
//
// TypeScript enums hold numbers, or strings never joined: esbuild copies
// a member's value into every use, and joins strings in members' values
// (`B = A + A`): 300 bytes of members that double a string made 20 MB,
// each further member twice that; members that copy a long string (`B =
// A`) print it again each (86 KB of code, 1.8 GB). An enum holding a
// string literal (or typeof) may hold no binary + and no name as a value,
// and none may hold a template, an array, an object or a regular
// expression, which make strings without one.
func checkNesting(src string) error {
	s := nestScan{src: src, stack: make([]nestFrame, 1, 8), lastEnd: true}
	s.run()
	return s.err
}

// nestFrame is an open bracket, a template substitution (sub) or the top
// level.
type nestFrame struct {
	sub   bool // a template substitution
	head  bool // the parentheses of an if, for, while or with
	chain int  // the statement bodies and arrow bodies open in it
	ops   int  // the right-associative operators open in it
	saved int  // chain before the last statement end, for an else
	base  int  // links when the expression being read in it began (see MaxChain)
	start int  // where the expression being read around it began (see MaxJoined)
	enum  bool // an enum's body, or in one
	list  bool // its commas separate items (arguments, an array, an object), not a sequence's expressions
	decl  bool // a let, const or var declaration is being read in it
	conds int  // the ? read in it still waiting for their :
}

type nestScan struct {
	src       string
	stack     []nestFrame
	err       error // the first bound passed, where
	levels    int   // the sum of the frames' chain and ops
	links     int   // the links of the expression being read, brackets open around it included
	start     int   // where the expression being read began, in the innermost bracket
	joined    int   // the bytes before each binary +, summed (see MaxJoined)
	enum      int   // 1 after the keyword enum, 2 after its name: a { opens its body
	enumStr   bool  // the enum being read holds a string literal or typeof
	enumPlus  bool  // the enum being read holds a binary + or names a value
	enumName  bool  // the next word in the enum's body names a member
	funcs     int   // the functions defined (see MaxFunctions)
	paren     bool  // the last token is a ) that is not an if's, for's, while's or with's
	typed     bool  // a return type follows such a ): a { ends it as the body
	unary     int   // the prefix operators just read
	pending   bool  // a body is expected: a block, or it counts as a level
	expr      bool  // the last token ends an operand: `/` divides, `+` is binary
	dot       bool  // the last token is `.` or `?.`: a keyword is a property name
	headNext  bool  // the last token is if, for, while or with
	lastEnd   bool  // the last token ends or starts a statement (`;`, a block's `{`, a case's `:`)
	block     bool  // a { here opens a block, not an object
	asi       bool  // a line break after the last token may end the statement
	newline   bool  // a line break since the last token
	afterElse bool  // the last token is else
}

func (s *nestScan) top() *nestFrame { return &s.stack[len(s.stack)-1] }

// refuse records the syntax error msg at off (its line and column, 1-based,
// the column in UTF-16 units), unless one was recorded before.
func (s *nestScan) refuse(off int, msg string) {
	if s.err != nil {
		return
	}
	starts := lineStarts(s.src)
	i := len(starts) - 1
	for starts[i] > off {
		i--
	}
	s.err = &SyntaxError{Message: msg, Line: i + 1, Column: utf16Len(s.src[starts[i]:off]) + 1}
}

// deeper checks the depth at off after a level was added.
func (s *nestScan) deeper(off int) {
	if len(s.stack)-1+s.levels+s.unary > MaxNesting {
		s.refuse(off, fmt.Sprintf("the code nests deeper than %d levels (each bracket, brace, parenthesis, arrow function, if/for/while body, prefix operator and chained =, ** or ?: is one); flatten it: move inner parts into functions or variables", MaxNesting))
	}
}

// link adds a link to the chain of operators being read, at off.
func (s *nestScan) link(off int) {
	if s.links++; s.links > MaxChain {
		s.refuse(off, fmt.Sprintf("the code chains more than %d operators in one expression (each binary operator, member access, call, index and comma between expressions is one); split it: put parts in variables", MaxChain))
	}
}

// enumStrings is the error for what could join strings in an enum.
const enumStrings = "an enum's strings may not be joined or copied (esbuild copies a member's value into every use): no templates, arrays, objects or regular expressions in an enum, and no + or other member's name in one that holds strings; for computed strings use an object: const E = { A: 'a' } as const"

// enumString notes a string (or typeof) or, with plus, a binary + or a
// name used as a value read at off in an enum's body, refusing the pair.
func (s *nestScan) enumString(off int, plus bool) {
	if plus {
		s.enumPlus = true
	} else {
		s.enumStr = true
	}
	if s.enumStr && s.enumPlus {
		s.refuse(off, enumStrings)
	}
}

// function counts a function defined at off.
func (s *nestScan) function(off int) {
	if s.funcs++; s.funcs > MaxFunctions {
		s.refuse(off, fmt.Sprintf("the code defines more than %d functions (each arrow function, function and method is one); reuse one function, called with what differs", MaxFunctions))
	}
}

// join weighs the binary + at off (see MaxJoined).
func (s *nestScan) join(off int) {
	if s.joined += off - s.start; s.joined > MaxJoined {
		s.refuse(off, fmt.Sprintf("the code joins too much with + (each + copies the text joined before it; %d MiB in all at most); build long text with an array's join or one template literal", MaxJoined>>20))
	}
}

// endStatement ends the bodies and the expression open in the current frame
// at off.
func (s *nestScan) endStatement(off int) {
	s.start = off
	f := s.top()
	if f.chain > 0 {
		f.saved = f.chain
	}
	s.levels -= f.chain + f.ops
	s.links = f.base
	f.chain, f.ops, f.conds = 0, 0, 0
}

// nestOp adds a right-associative operator to the current frame.
func (s *nestScan) nestOp(off int) {
	s.top().ops++
	s.levels++
	s.deeper(off)
}

// token is called before each token at off (not for whitespace and
// comments): a body that was expected and is not a block is a level.
func (s *nestScan) token(off int, open byte) {
	s.block = s.lastEnd || s.pending || s.expr
	if (s.paren || s.typed) && open == '{' {
		s.function(off)
		s.typed = false
	}
	s.typed = s.typed && open != ';' && open != '=' || s.paren && open == ':'
	s.lastEnd, s.paren = false, false
	if s.newline {
		s.newline = false
		if s.asi && !s.pending && s.unary == 0 && !continues(s.src[off:]) {
			s.endStatement(off)
			s.block, s.top().decl = true, false
		}
	}
	if s.top().enum && (strings.IndexByte("`[{", open) >= 0 || open == '/' && !s.expr) {
		s.refuse(off, enumStrings)
	} else if s.top().enum && (open == '\'' || open == '"') {
		s.enumName = false // a quoted member name, or a value
		s.enumString(off, false)
	}
	if s.pending && open != '{' {
		s.top().chain++
		s.levels++
		s.deeper(off)
	}
	s.pending = false
}

func (s *nestScan) run() {
	src := s.src
	for i := 0; i < len(src) && s.err == nil; {
		c := src[i]
		switch {
		case c == '\n' || c == '\r':
			s.newline = true
			fallthrough
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' && src[i] != '\r' {
				i++
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return // unterminated: esbuild says so
			}
			s.newline = s.newline || strings.ContainsAny(src[i:i+2+end], "\n\r")
			i += end + 4
			continue
		}
		if isIdentByte(c) {
			j := i
			for j < len(src) && isIdentByte(src[j]) {
				j++
			}
			if s.afterElse && src[i:j] == "if" {
				s.pending = false // else if: a flat chain, not a nesting
			}
			s.afterElse = false
			s.token(i, c)
			if s.top().enum && !(c >= '0' && c <= '9') {
				if s.enumName && !s.stack[len(s.stack)-2].enum { // the body itself
					s.enumName = false
				} else if w := src[i:j]; w != "typeof" {
					s.enumString(i, true)
				}
			}
			enum := s.enum
			s.enum = 0
			s.word(i, src[i:j], c >= '0' && c <= '9')
			if enum == 1 {
				s.enum = 2 // after the enum's name
			}
			i = j
			continue
		}
		enum := s.enum
		s.afterElse, s.enum = false, 0
		s.token(i, c)
		dot, expr := false, false
		switch c {
		case '\'', '"':
			i = skipLiteral(src, i)
			s.unary, expr = 0, true
		case '`':
			if s.expr { // a tagged template
				s.link(i)
			}
			i = s.template(i + 1)
			s.unary, expr = 0, true
			s.deeper(i - 2) // at the ${ it opened, if any
		case '(', '[', '{':
			if s.expr && c != '{' { // a call or an index
				s.link(i)
			}
			s.unary = 0
			list := c == '(' && s.expr || c == '[' && !s.expr || c == '{' && (!s.block || enum == 2)
			if enum == 2 && c == '{' {
				s.enumStr, s.enumPlus, s.enumName = false, false, true
			}
			s.stack = append(s.stack, nestFrame{head: c == '(' && s.headNext, base: s.links, start: s.start, enum: s.top().enum || enum == 2 && c == '{', list: list})
			s.start, s.lastEnd = i, c == '{' && !list
			s.deeper(i)
			i++
		case ')', ']', '}':
			f := *s.top()
			if len(s.stack) > 1 {
				s.levels -= f.chain + f.ops
				s.stack = s.stack[:len(s.stack)-1]
				s.start = f.start
				if f.sub { // a template's substitutions are apart; a bracket's
					// links count on in the expression around it
					s.links = f.base
				}
			}
			i++
			if f.sub {
				i = s.template(i)
				s.deeper(i - 2)
			}
			expr = true
			if f.head {
				s.pending, expr = true, false
			}
			s.paren = c == ')' && expr // a function's body may follow
		case ';', ',':
			s.unary = 0
			links := s.links
			s.endStatement(i)
			s.lastEnd = c == ';'
			if f := s.top(); c == ';' {
				f.decl = false
			} else if f.enum && !s.stack[len(s.stack)-2].enum {
				s.enumName = true
			} else if !f.list && !f.decl { // a comma operator: its sequence is a chain
				s.links = links
				s.link(i)
			}
			i++
		case ':':
			if f := s.top(); f.conds > 0 {
				f.conds--
			} else {
				s.lastEnd = !f.list // a case's or a label's
			}
			i++
		case '/':
			if !s.expr {
				i = skipLiteral(src, i) // a regular expression
				s.unary, expr = 0, true
				break
			}
			if !strings.HasPrefix(src[i:], "/=") { // /= is an assignment
				s.link(i)
			}
			i++
		case '=':
			s.unary = 0
			switch {
			case strings.HasPrefix(src[i:], "=>"):
				s.pending = true
				s.function(i)
				i += 2
			case isAssignment(src, i): // right-associative: a = b = c nests
				s.nestOp(i)
				i++
			default: // ==, ===, !=, <=, >=
				s.link(i)
				for i < len(src) && src[i] == '=' {
					i++
				}
			}
		case '*':
			i++
			if i < len(src) && src[i] == '*' && (i+1 >= len(src) || src[i+1] != '=') { // a ** b ** c nests
				s.nestOp(i - 1)
				i++
			} else if s.expr && (i >= len(src) || src[i] != '=' && src[i] != '*') {
				s.link(i - 1)
			}
		case '!', '~', '+', '-':
			n := 1
			if (c == '+' || c == '-') && i+1 < len(src) && src[i+1] == c {
				n = 2
			}
			if s.expr && (n == 2 || c == '!') { // postfix, or TypeScript's non-null assertion
				expr = true
			} else if s.expr && (i+1 >= len(src) || src[i+1] != '=') { // binary, not += or -=
				s.link(i)
				if c == '+' {
					s.join(i)
					if s.top().enum {
						s.enumString(i, true)
					}
				}
			} else if !s.expr {
				s.unary++
				s.deeper(i)
			}
			i += n
		case '.':
			s.link(i)
			dot = true
			i++
		case '?':
			switch {
			case strings.HasPrefix(src[i:], "?.") && !(i+2 < len(src) && src[i+2] >= '0' && src[i+2] <= '9'):
				s.link(i)
				dot = true
				i += 2
			case strings.HasPrefix(src[i:], "??"):
				s.link(i)
				i += 2
			default: // a ? b : c ? d : e nests
				s.unary = 0
				s.top().conds++
				s.nestOp(i)
				i++
			}
		case '<', '>', '&', '|', '^', '%':
			op := i
			for i < len(src) && strings.IndexByte("<>&|^%", src[i]) >= 0 {
				i++
			}
			if i >= len(src) || src[i] != '=' { // else the = is read next: <=, or an assignment such as <<= or &&=
				s.link(op)
			}
		default:
			i++
		}
		s.expr, s.asi, s.dot, s.headNext = expr, expr, dot, false
	}
}

// word handles an identifier, keyword or number at off.
func (s *nestScan) word(off int, w string, number bool) {
	headNext := s.headNext
	s.expr, s.asi, s.headNext = true, true, false
	if number || s.dot {
		s.unary, s.dot = 0, false
		return
	}
	switch w {
	case "if", "for", "while", "with":
		s.unary, s.expr, s.asi, s.headNext = 0, false, false, true
	case "do":
		s.unary, s.expr, s.asi, s.pending = 0, false, false, true
	case "else":
		f := s.top()
		if s.lastEnd || f.chain == 0 {
			s.levels += f.saved - f.chain
			f.chain = f.saved
		}
		if f.chain > 0 { // the if this else belongs to ends here
			f.chain--
			s.levels--
		}
		f.saved = 0
		s.unary, s.expr, s.asi, s.pending, s.afterElse = 0, false, false, true, true
	case "enum":
		s.unary, s.enum = 0, 1
	case "let", "const", "var": // a { or [ after them is a pattern
		s.unary, s.expr, s.top().decl = 0, false, true
	case "typeof", "void", "delete", "await", "new", "yield":
		if w == "typeof" && s.top().enum {
			s.enumString(off, false)
		}
		s.expr, s.asi, s.headNext = false, false, w == "await" && headNext // for await (…)
		s.unary++
		s.deeper(off)
	case "return", "break", "continue":
		s.unary, s.expr = 0, false // asi: a line break ends the statement
	case "in", "instanceof":
		s.unary, s.expr, s.asi = 0, false, false
		s.link(off)
	case "case", "of", "throw", "default":
		s.unary, s.expr, s.asi = 0, false, false
	default:
		s.unary = 0
	}
}

// template skips template text from i (after a backtick or a substitution's
// closing brace) to the closing backtick, or into a substitution, which it
// opens as a frame.
func (s *nestScan) template(i int) int {
	for i < len(s.src) {
		switch s.src[i] {
		case '\\':
			i += 2
		case '`':
			return i + 1
		case '$':
			if i+1 < len(s.src) && s.src[i+1] == '{' {
				s.stack = append(s.stack, nestFrame{sub: true, base: s.links, start: s.start})
				s.start = i
				return i + 2
			}
			i++
		default:
			i++
		}
	}
	return i
}

// skipLiteral skips the string or regular expression literal at i (its
// opening quote or slash) to after its closing one, or to the end of its
// line; in a regular expression a slash in a class (`[/]`) does not close it.
func skipLiteral(src string, i int) int {
	q, class := src[i], false
	for i++; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\\':
			i++
		case c == '\n' || c == '\r':
			return i
		case q == '/' && (c == '[' || c == ']'):
			class = c == '['
		case c == q && !class:
			return i + 1
		}
	}
	return i
}

// continues reports whether a token starting rest continues the statement
// before a line break (no semicolon is inserted before it).
func continues(rest string) bool {
	if strings.IndexByte("?:.,+-*/%=<>&|^([`", rest[0]) >= 0 {
		return true
	}
	j := 0
	for j < len(rest) && isIdentByte(rest[j]) {
		j++
	}
	switch rest[:j] {
	case "in", "instanceof", "as", "satisfies":
		return true
	}
	return false
}

// isAssignment reports whether the = at i is an assignment operator (=,
// +=, <<=, …), not part of ==, !=, <=, >= or =>.
func isAssignment(src string, i int) bool {
	if i+1 < len(src) && (src[i+1] == '=' || src[i+1] == '>') {
		return false
	}
	if i == 0 {
		return true
	}
	switch p := src[i-1]; p {
	case '=', '!':
		return false
	case '<', '>':
		return i >= 2 && src[i-2] == p // <<=, >>=, >>>=
	}
	return true
}
