package ir

import (
	"fmt"
	"strconv"
)

type tokKind uint8

const (
	tEOF tokKind = iota
	tName
	tString
	tInt
	tFloat
	tLParen
	tRParen
	tLBrack
	tRBrack
	tLBrace
	tRBrace
	tColon
	tComma
	tEquals
	tAt
	tCaret
	tPipe
	tArrow
)

var tokNames = [...]string{
	tEOF: "end of file", tName: "name", tString: "string", tInt: "integer", tFloat: "float",
	tLParen: `"("`, tRParen: `")"`, tLBrack: `"["`, tRBrack: `"]"`, tLBrace: `"{"`, tRBrace: `"}"`,
	tColon: `":"`, tComma: `","`, tEquals: `"="`, tAt: `"@"`, tCaret: `"^"`, tPipe: `"|"`, tArrow: `"->"`,
}

// token is the current token: its kind, its bytes in the source and the
// position of its first byte.
type token struct {
	kind       tokKind
	start, end int
	line, col  int
	escaped    bool // a string token with a backslash: needs strconv.Unquote
}

// lexer splits the source into tokens. Newlines are white space: the
// grammar is self-delimiting, and statements are one per line only by the
// printer's convention.
type lexer struct {
	file      string
	src       []byte
	pos       int
	line      int
	lineStart int
	tok       token
	err       *ParseError
}

// ParseError is a syntax or semantic error in .dpir text, at a position.
// Line and Col are 1-based; Col counts bytes.
type ParseError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

func (lx *lexer) errorAt(line, col int, format string, args ...any) {
	if lx.err == nil {
		lx.err = &ParseError{File: lx.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
	}
	// Park on EOF so that the parser unwinds quickly.
	lx.pos = len(lx.src)
	lx.tok = token{kind: tEOF, start: lx.pos, end: lx.pos, line: line, col: col}
}

// next advances to the next token.
func (lx *lexer) next() {
	if lx.err != nil {
		return
	}
	src := lx.src
	i := lx.pos
	for i < len(src) {
		c := src[i]
		if c == ' ' {
			i++
		} else if c == '\n' {
			i++
			lx.line++
			lx.lineStart = i
		} else if c == '\t' || c == '\r' {
			i++
		} else if c == '#' {
			for i < len(src) && src[i] != '\n' {
				i++
			}
		} else {
			break
		}
	}
	t := token{start: i, line: lx.line, col: i - lx.lineStart + 1}
	if i >= len(src) {
		t.kind, t.end = tEOF, i
		lx.tok, lx.pos = t, i
		return
	}
	c := src[i]
	j := i + 1
	switch {
	case charClass[c]&classNameStart != 0:
		for j < len(src) && charClass[src[j]]&className != 0 {
			j++
		}
		t.kind = tName
	case c >= '0' && c <= '9':
		if j, t.kind = lx.scanNumber(i); t.kind == tEOF {
			lx.errorNumber(t, i, j)
			return
		}
	case c == '-':
		switch {
		case j < len(src) && src[j] == '>':
			j++
			t.kind = tArrow
		case j < len(src) && src[j] >= '0' && src[j] <= '9':
			if j, t.kind = lx.scanNumber(j); t.kind == tEOF {
				lx.errorNumber(t, i, j)
				return
			}
		case hasWord(src, j, "inf"):
			j += 3
			t.kind = tFloat
		default:
			lx.errorAt(t.line, t.col, `unexpected "-"`)
			return
		}
	case c == '"':
		for {
			if j >= len(src) || src[j] == '\n' {
				lx.errorAt(t.line, t.col, "unterminated string")
				return
			}
			if src[j] == '\\' {
				if j+1 < len(src) && src[j+1] == '\n' {
					lx.errorAt(t.line, t.col, "unterminated string")
					return
				}
				t.escaped = true
				j += 2
				continue
			}
			j++
			if src[j-1] == '"' {
				break
			}
		}
		t.kind = tString
	default:
		switch c {
		case '(':
			t.kind = tLParen
		case ')':
			t.kind = tRParen
		case '[':
			t.kind = tLBrack
		case ']':
			t.kind = tRBrack
		case '{':
			t.kind = tLBrace
		case '}':
			t.kind = tRBrace
		case ':':
			t.kind = tColon
		case ',':
			t.kind = tComma
		case '=':
			t.kind = tEquals
		case '@':
			t.kind = tAt
		case '^':
			t.kind = tCaret
		case '|':
			t.kind = tPipe
		default:
			if c < 0x20 || c >= 0x7f {
				lx.errorAt(t.line, t.col, "unexpected byte %#02x", c)
			} else {
				lx.errorAt(t.line, t.col, "unexpected %q", rune(c))
			}
			return
		}
	}
	if j > len(src) {
		j = len(src)
	}
	t.end = j
	lx.tok, lx.pos = t, j
}

// scanNumber scans the digits, fraction and exponent of a number starting
// at i and says whether it is an integer or a float. A number runs into
// no name byte: "0x", "1x2", "1e", "0b1" and "1_000" are each one
// malformed token, for which scanNumber returns tEOF and the end of the
// run of name bytes (errorNumber says what is wrong), rather than a
// number and a name that the grammar would misread.
func (lx *lexer) scanNumber(i int) (int, tokKind) {
	src := lx.src
	start := i
	kind := tInt
	if i+1 < len(src) && src[i] == '0' && (src[i+1] == 'x' || src[i+1] == 'X') {
		// A hex integer: role bits with no name are written so.
		i += 2
		for i < len(src) && isHexDigit(src[i]) {
			i++
		}
		if i == start+2 {
			return badNumberEnd(src, i), tEOF
		}
	} else {
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
		}
		if i < len(src) && src[i] == '.' {
			kind = tFloat
			i++
			for i < len(src) && src[i] >= '0' && src[i] <= '9' {
				i++
			}
		}
		if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
			k := i + 1
			if k < len(src) && (src[k] == '+' || src[k] == '-') {
				k++
			}
			if k >= len(src) || src[k] < '0' || src[k] > '9' {
				return badNumberEnd(src, k), tEOF
			}
			kind = tFloat
			for k < len(src) && src[k] >= '0' && src[k] <= '9' {
				k++
			}
			i = k
		}
	}
	if i < len(src) && isNameChar(src[i]) {
		return badNumberEnd(src, i), tEOF
	}
	return i, kind
}

// badNumberEnd returns the end of the run of name bytes at i, which ends
// a malformed number.
func badNumberEnd(src []byte, i int) int {
	for i < len(src) && isNameChar(src[i]) {
		i++
	}
	return i
}

// errorNumber reports the malformed number src[start:end] at t.
func (lx *lexer) errorNumber(t token, start, end int) {
	s := lx.src[start:min(end, start+40)]
	digits := s
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	why := ""
	if len(digits) > 1 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') && (len(digits) == 2 || !isHexDigit(digits[2])) {
		why = ": no hex digits after 0x"
	}
	lx.errorAt(t.line, t.col, "malformed number %q%s", s, why)
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// hasWord reports whether src holds word at i, not followed by a name char.
func hasWord(src []byte, i int, word string) bool {
	if len(src)-i < len(word) || string(src[i:i+len(word)]) != word {
		return false
	}
	return i+len(word) == len(src) || !isNameChar(src[i+len(word)])
}

// text returns the current token's bytes.
func (lx *lexer) text() []byte { return lx.src[lx.tok.start:lx.tok.end] }

// describe spells the current token for "found ..." in messages.
func (lx *lexer) describe() string {
	t := lx.tok
	switch t.kind {
	case tEOF:
		return "end of file"
	case tName, tInt, tFloat:
		s := lx.src[t.start:t.end]
		if len(s) > 40 {
			s = append(s[:37:37], "..."...)
		}
		return tokNames[t.kind] + " " + strconv.Quote(string(s))
	case tString:
		return "string"
	}
	return tokNames[t.kind]
}

// charClass classifies bytes for the lexer's hot loops.
var charClass = func() (t [256]uint8) {
	for c := range 256 {
		if isNameStart(byte(c)) {
			t[c] |= classNameStart
		}
		if isNameChar(byte(c)) {
			t[c] |= className
		}
	}
	return t
}()

const (
	classNameStart = 1 << iota
	className
)
