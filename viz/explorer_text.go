package viz

import "strconv"

// The explorer's view of the module text: which tokens of ir.Print's
// output are var names and op ids. A small reader follows the grammar of
// package ir's doc far enough to tell a var from a slot, a mesh or an
// attribute that happens to share its name. It never fails: a token it
// does not expect is skipped, and statements are only recognised at the
// start of a line, where the printer puts them.

// textMark is a token to wrap in a clickable span.
type textMark struct {
	start, end int    // byte offsets in the text
	op         bool   // an op id, else a var name
	key        string // var: the name as printed; op: "program:id"
	// decl is set on the name of a var declaration, with the program
	// and block it is in.
	decl  bool
	prog  string
	block int
}

type tokKind uint8

const (
	tokName   tokKind = iota // a bare name: [A-Za-z_][A-Za-z0-9_.@]*
	tokString                // a Go-quoted string (a name or a value)
	tokNumber                // an int or a float, "-inf" included
	tokArrow                 // ->
	tokPunct                 // any other single byte
)

type textToken struct {
	kind       tokKind
	start, end int
	first      bool // the first token on its line
}

// lexText splits text into tokens, dropping white space and comments.
func lexText(text []byte) []textToken {
	var toks []textToken
	first := true
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\n':
			first = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case c == '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			continue
		}
		t := textToken{start: i, first: first}
		first = false
		switch {
		case isNameStart(c):
			t.kind = tokName
			for i++; i < len(text) && isNameChar(text[i]); i++ {
			}
		case c == '"':
			t.kind = tokString
			for i++; i < len(text) && text[i] != '"' && text[i] != '\n'; i++ {
				if text[i] == '\\' && i+1 < len(text) && text[i+1] != '\n' {
					i++
				}
			}
			if i < len(text) && text[i] == '"' {
				i++
			}
		case c == '-' && i+1 < len(text) && text[i+1] == '>':
			t.kind = tokArrow
			i += 2
		case isDigit(c) || c == '-' && i+1 < len(text) && (isDigit(text[i+1]) || text[i+1] == 'i'):
			t.kind = tokNumber
			for i++; i < len(text); i++ {
				d := text[i]
				if !isNameChar(d) && !((d == '-' || d == '+') && (text[i-1] == 'e' || text[i-1] == 'E')) {
					break
				}
			}
		default:
			t.kind = tokPunct
			i++
		}
		t.end = i
		toks = append(toks, t)
	}
	return toks
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isNameChar(c byte) bool {
	return isNameStart(c) || isDigit(c) || c == '.' || c == '@'
}

// markText finds the var names and op ids of a module's text, in order.
func markText(text []byte) []textMark {
	r := &textReader{text: text, toks: lexText(text)}
	r.read()
	return r.marks
}

type textReader struct {
	text  []byte
	toks  []textToken
	i     int
	prog  string // the program being read
	block int    // the block being read
	marks []textMark
}

// peek returns the next token of the statement being read: a token first
// on its line starts another statement, and is not returned.
func (r *textReader) peek() (textToken, bool) {
	if r.i >= len(r.toks) || r.toks[r.i].first {
		return textToken{}, false
	}
	return r.toks[r.i], true
}

func (r *textReader) str(t textToken) string { return string(r.text[t.start:t.end]) }

// is reports whether the next token is of kind k and, unless s is "",
// spells s; it does not consume it.
func (r *textReader) is(k tokKind, s string) bool {
	t, ok := r.peek()
	return ok && t.kind == k && (s == "" || r.str(t) == s)
}

// accept consumes the next token when it is(k, s).
func (r *textReader) accept(k tokKind, s string) (textToken, bool) {
	if !r.is(k, s) {
		return textToken{}, false
	}
	t := r.toks[r.i]
	r.i++
	return t, true
}

// varName consumes a name, bare or quoted, and marks it as a var.
func (r *textReader) varName() bool {
	t, ok := r.peek()
	if !ok || t.kind != tokName && t.kind != tokString {
		return false
	}
	r.i++
	r.marks = append(r.marks, textMark{start: t.start, end: t.end, key: r.str(t)})
	return true
}

// opID consumes an int and marks it as an op id of the current program.
func (r *textReader) opID() bool {
	t, ok := r.accept(tokNumber, "")
	if !ok {
		return false
	}
	r.marks = append(r.marks, textMark{start: t.start, end: t.end, op: true, key: r.prog + ":" + r.str(t)})
	return true
}

// read reads statements: a statement starts with a keyword first on its
// line; everything else is skipped.
func (r *textReader) read() {
	for r.i < len(r.toks) {
		t := r.toks[r.i]
		r.i++
		if !t.first || t.kind != tokName {
			continue
		}
		switch r.str(t) {
		case "program":
			if n, ok := r.peek(); ok && (n.kind == tokName || n.kind == tokString) {
				r.prog = r.str(n)
				r.i++
			}
		case "block":
			if n, ok := r.accept(tokNumber, ""); ok {
				r.block, _ = strconv.Atoi(r.str(n))
			}
		case "var", "persist", "param":
			if r.varName() {
				m := &r.marks[len(r.marks)-1]
				m.decl, m.prog, m.block = true, r.prog, r.block
			}
		case "op":
			r.op()
		case "grads":
			if r.varName() {
				if _, ok := r.accept(tokArrow, ""); ok {
					r.varName()
				}
			}
		}
	}
}

// op reads the rest of: op ID TYPE slots -> slots [attrs] [role R] [fwd ID] [opdist].
func (r *textReader) op() {
	if !r.opID() {
		return
	}
	if _, ok := r.accept(tokName, ""); !ok {
		if _, ok := r.accept(tokString, ""); !ok {
			return
		}
	}
	if !r.slots() {
		return
	}
	if _, ok := r.accept(tokArrow, ""); !ok {
		return
	}
	if !r.slots() {
		return
	}
	if r.is(tokPunct, "{") {
		r.skipNested("{", "}")
	}
	if _, ok := r.accept(tokName, "role"); ok {
		for {
			if _, ok := r.accept(tokName, ""); !ok {
				break
			}
			if _, ok := r.accept(tokPunct, "|"); !ok {
				break
			}
		}
	}
	if _, ok := r.accept(tokName, "fwd"); ok {
		r.opID()
	}
	// The printer starts the op's dist on a line of its own.
	if r.i < len(r.toks) && r.toks[r.i].kind == tokName && r.str(r.toks[r.i]) == "dist" {
		r.i++
		r.opDist()
	}
}

// slots reads ( name: arg, name: [arg, ...] ), marking the args.
func (r *textReader) slots() bool {
	if _, ok := r.accept(tokPunct, "("); !ok {
		return false
	}
	for {
		if _, ok := r.accept(tokPunct, ")"); ok {
			return true
		}
		if _, ok := r.accept(tokName, ""); !ok {
			if _, ok := r.accept(tokString, ""); !ok {
				return false
			}
		}
		if _, ok := r.accept(tokPunct, ":"); !ok {
			return false
		}
		if _, ok := r.accept(tokPunct, "["); ok {
			for !r.is(tokPunct, "]") {
				if !r.varName() {
					return false
				}
				r.accept(tokPunct, ",")
			}
			r.i++ // ]
		} else if !r.varName() {
			return false
		}
		r.accept(tokPunct, ",")
	}
}

// opDist reads @mesh [impl T:N] [recompute] [ name: ints, ... -> name: ints, ... ],
// marking the names.
func (r *textReader) opDist() {
	if _, ok := r.accept(tokPunct, "@"); !ok {
		return
	}
	for !r.is(tokPunct, "[") { // the mesh, impl T:N, recompute
		if _, ok := r.peek(); !ok {
			return
		}
		r.i++
	}
	r.i++ // [
	for {
		if _, ok := r.accept(tokPunct, "]"); ok {
			return
		}
		if _, ok := r.accept(tokArrow, ""); ok {
			continue
		}
		if !r.varName() {
			return
		}
		if _, ok := r.accept(tokPunct, ":"); !ok {
			return
		}
		if !r.is(tokPunct, "[") {
			return
		}
		r.skipNested("[", "]")
		r.accept(tokPunct, ",")
	}
}

// skipNested consumes a bracketed group, open included, through its
// matching close.
func (r *textReader) skipNested(open, close string) {
	depth := 0
	for ; r.i < len(r.toks); r.i++ {
		t := r.toks[r.i]
		if t.first && depth > 0 {
			return // unbalanced: the statement ended
		}
		if t.kind != tokPunct {
			continue
		}
		switch r.str(t) {
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				r.i++
				return
			}
		}
	}
}
