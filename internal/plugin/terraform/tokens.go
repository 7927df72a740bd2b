package terraform

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// tokenKind is what a token of terraform's native syntax is, as far as
// finding variable blocks needs.
type tokenKind int

const (
	tokIdent  tokenKind = iota
	tokString           // a quoted string or a heredoc; text is a plain one's content
	tokOpen             // { ( [
	tokClose            // } ) ]
	tokPunct            // anything else (=, :, ., numbers' characters, …)
)

// token is one token.
type token struct {
	kind tokenKind
	text string
}

// maxNesting bounds templates inside strings inside templates: a file
// nesting them deeper is no module anyone wrote.
const maxNesting = 100

// maxTokens bounds the tokens of a file (≈ 50 MB of them): a module's file
// of ten times the largest anyone writes has fewer; one made to exhaust
// memory ("=" ten million times) is refused.
const maxTokens = 2 << 20

// tokenize splits text into tokens, skipping comments and whitespace, and
// taking a string (its ${…} and %{…} templates included, strings in them
// too) or a heredoc as one token.
func tokenize(text string) ([]token, error) {
	s := &scanner{text: text}
	if err := s.code(0, false); err != nil {
		return nil, err
	}
	return s.toks, nil
}

// scanner is tokenize's progress.
type scanner struct {
	text string
	pos  int
	toks []token
}

func (s *scanner) emit(kind tokenKind, text string) {
	s.toks = append(s.toks, token{kind: kind, text: text})
}

// code scans code up to the end of the text, or, inside a template
// (nested > 0, inTemplate), up to the brace that closes it, which it
// consumes. Tokens inside templates are not emitted.
func (s *scanner) code(nested int, inTemplate bool) error {
	if nested > maxNesting {
		return s.errAt(s.pos, "templates nested too deep")
	}
	start := max(s.pos-2, 0) // a template's ${, which its caller read
	depth := 0
	emit := func(kind tokenKind, text string) {
		if !inTemplate {
			s.emit(kind, text)
		}
	}
	for s.pos < len(s.text) {
		if len(s.toks) > maxTokens {
			return s.errAt(s.pos, fmt.Sprintf("more than %d tokens: not a file terraform reads in reasonable time", maxTokens))
		}
		c := s.text[s.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			s.pos++
		case c == '#' || c == '/' && s.peek(1) == '/':
			for s.pos < len(s.text) && s.text[s.pos] != '\n' {
				s.pos++
			}
		case c == '/' && s.peek(1) == '*':
			end := strings.Index(s.text[s.pos+2:], "*/")
			if end < 0 {
				return s.errAt(s.pos, "a /* comment is not closed")
			}
			s.pos += 2 + end + 2
		case c == '"':
			start := s.pos
			plain, err := s.str(nested)
			if err != nil {
				return err
			}
			text := ""
			if plain {
				text = s.text[start+1 : s.pos-1]
			}
			emit(tokString, text)
		case c == '<' && s.peek(1) == '<' && (isIdentByte(s.peek(2), false) || s.peek(2) == '-' && isIdentByte(s.peek(3), false)):
			if err := s.heredoc(); err != nil {
				return err
			}
			emit(tokString, "")
		case c == '{' || c == '(' || c == '[':
			s.pos++
			depth++
			emit(tokOpen, string(c))
		case c == '}' || c == ')' || c == ']':
			s.pos++
			if inTemplate && depth == 0 && c == '}' {
				return nil
			}
			depth--
			emit(tokClose, string(c))
		case isIdentByte(c, false):
			start := s.pos
			for s.pos < len(s.text) && isIdentByte(s.text[s.pos], true) {
				s.pos++
			}
			emit(tokIdent, s.text[start:s.pos])
		default:
			s.pos++
			emit(tokPunct, string(c))
		}
	}
	if inTemplate {
		return s.errAt(start, "a ${ in a string is not closed")
	}
	return nil
}

// str scans a quoted string from its opening quote past its closing one;
// plain says it held no escape and no template.
func (s *scanner) str(nested int) (plain bool, err error) {
	plain = true
	start := s.pos
	s.pos++
	for s.pos < len(s.text) {
		c := s.text[s.pos]
		switch {
		case c == '"':
			s.pos++
			return plain, nil
		case c == '\\':
			plain = false
			s.pos += 2
		case c == '\n':
			return false, s.errAt(start, "a string is not closed on its line")
		case (c == '$' || c == '%') && s.peek(1) == '{':
			if s.peek(-1) == c {
				// $${ and %%{ are escapes, not templates.
				s.pos += 2
				continue
			}
			plain = false
			s.pos += 2
			if err := s.code(nested+1, true); err != nil {
				return false, err
			}
		default:
			s.pos++
		}
	}
	return false, s.errAt(start, "a string is not closed")
}

// heredoc scans <<EOF or <<-EOF up to the line that is its marker alone.
func (s *scanner) heredoc() error {
	open := s.pos
	s.pos += 2
	if s.peek(0) == '-' {
		s.pos++
	}
	start := s.pos
	for s.pos < len(s.text) && isIdentByte(s.text[s.pos], true) {
		s.pos++
	}
	marker := s.text[start:s.pos]
	nl := strings.IndexByte(s.text[s.pos:], '\n')
	if nl < 0 {
		return s.errAt(open, "a heredoc <<"+marker+" has no lines")
	}
	s.pos += nl + 1
	for s.pos < len(s.text) {
		end := strings.IndexByte(s.text[s.pos:], '\n')
		line := s.text[s.pos:]
		if end >= 0 {
			line = s.text[s.pos : s.pos+end]
		}
		if strings.TrimSpace(line) == marker {
			s.pos += len(line)
			return nil
		}
		if end < 0 {
			break
		}
		s.pos += end + 1
	}
	return s.errAt(open, "a heredoc <<"+marker+" is not closed")
}

// block is a top-level block of a file: `variable "name" {` … `}`.
type block struct {
	label       string // its first label, a plain string's content or a word
	open, close int    // the indexes of its braces among the file's tokens
}

// topBlocks are the blocks of a type at the top level of a file's tokens:
// `variable "name" {` or `variable name {`, not one nested in another.
func topBlocks(toks []token, typ string) []block {
	var out []block
	depth := 0
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == tokOpen:
			depth++
		case t.kind == tokClose:
			depth--
		case depth == 0 && t.kind == tokIdent && t.text == typ &&
			i+2 < len(toks) && (toks[i+1].kind == tokString || toks[i+1].kind == tokIdent) && toks[i+2].kind == tokOpen && toks[i+2].text == "{":
			b := block{label: toks[i+1].text, open: i + 2, close: len(toks)}
			nested := 0
			for j := b.open; j < len(toks); j++ {
				if toks[j].kind == tokOpen {
					nested++
				} else if toks[j].kind == tokClose {
					if nested--; nested == 0 {
						b.close = j
						break
					}
				}
			}
			out = append(out, b)
			i = b.close
		}
	}
	return out
}

// attribute is the first token of the value an attribute of the block is
// set to (`type = list(string)`: the word list; `source = "./x"`: the
// string), the last one set when it is set twice; a zero token (kind
// tokIdent, text "") when it is not set. Attributes of blocks nested in it
// are not its own.
func (b block) attribute(toks []token, name string) token {
	var value token
	nested := 0
	for i := b.open; i < b.close; i++ {
		switch t := toks[i]; {
		case t.kind == tokOpen:
			nested++
		case t.kind == tokClose:
			nested--
		case nested == 1 && t.kind == tokIdent && t.text == name &&
			i+2 < len(toks) && toks[i+1].kind == tokPunct && toks[i+1].text == "=":
			value = toks[i+2]
		}
	}
	return value
}

// syntaxError is text terraform cannot read either, at a place of it.
type syntaxError struct {
	line, column int // from 1; the column in characters
	msg          string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%d:%d: %s", e.line, e.column, e.msg) }

// errAt is an error about the text from offset at.
func (s *scanner) errAt(at int, msg string) error {
	before := s.text[:min(max(at, 0), len(s.text))]
	lineStart := strings.LastIndexByte(before, '\n') + 1
	return &syntaxError{line: strings.Count(before, "\n") + 1, column: utf8.RuneCountInString(before[lineStart:]) + 1, msg: msg}
}

// peek is the byte off bytes from the scanner's position, 0 past the text.
func (s *scanner) peek(off int) byte {
	if i := s.pos + off; i >= 0 && i < len(s.text) {
		return s.text[i]
	}
	return 0
}

// isIdentByte reports whether c may be in an identifier (its first byte
// when !rest).
func isIdentByte(c byte, rest bool) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80 ||
		rest && (c >= '0' && c <= '9' || c == '-')
}
