package component

import (
	"regexp"
	"strings"
)

// A terraform output whose value is a map, a list or a multi-line string
// takes several lines, as `terraform apply` and `terraform output` print
// it:
//
//	conn = {
//	  "pass" = "p4ss"
//	  "user" = "admin"
//	}
//	notes = <<EOT
//	line one
//	EOT
//
// The lines after the first are the value's, not outputs of their own: the
// value is read whole (the text as printed from the opening bracket to the
// closing one; a heredoc's lines between its markers).

// heredocRE matches a line ending in a heredoc's opening marker.
var heredocRE = regexp.MustCompile(`<<(-?)([A-Za-z_][A-Za-z0-9_]*)$`)

// openerRE matches a value that opens a map or a list on its own, as
// terraform prints one ("{", "[", "tomap({", "toset([", …): a value that
// merely ends with a bracket ("a {") is a value of one line.
var openerRE = regexp.MustCompile(`^(to(map|list|set|object|tuple)\()?[\[{]$`)

// multiline is a value being read over several lines.
type multiline struct {
	key   string
	lines []string
	depth int // brackets open
	// heredoc is the marker that ends the heredoc being read (the value
	// itself, or a string inside it), indent whether it is "<<-".
	heredoc string
	indent  bool
	// top says the value itself is a heredoc: its text is its lines.
	top bool
}

// opens returns the multi-line value that a first line's value opens, if it
// does.
func opens(key, v string) *multiline {
	if m := heredocRE.FindStringSubmatch(v); m != nil && m[0] == v {
		return &multiline{key: key, heredoc: m[2], indent: m[1] == "-", top: true}
	}
	if openerRE.MatchString(v) {
		return &multiline{key: key, lines: []string{v}, depth: 1}
	}
	return nil
}

// bracketDelta is what a line does to the brackets open, by terraform's
// layout: an opening bracket ends its line ("{", "[", "tomap({"), a closing
// one begins it ("}", "],", "})").
func bracketDelta(t string) int {
	d := 0
	if strings.HasPrefix(t, "}") || strings.HasPrefix(t, "]") {
		d--
	}
	if strings.HasSuffix(t, "{") || strings.HasSuffix(t, "[") {
		d++
	}
	return d
}

// add takes the next line (colours stripped); done says the value is
// whole.
func (m *multiline) add(line string) (done bool) {
	t := strings.TrimSpace(line)
	if m.heredoc != "" {
		if t == m.heredoc {
			m.heredoc = ""
			if m.top {
				return true
			}
		}
		m.lines = append(m.lines, strings.TrimRight(line, "\r"))
		return false
	}
	m.lines = append(m.lines, strings.TrimRight(line, "\r"))
	if h := heredocRE.FindStringSubmatch(t); h != nil {
		m.heredoc, m.indent = h[2], h[1] == "-"
		return false
	}
	m.depth += bracketDelta(t)
	return m.depth <= 0
}

// value is the text read so far.
func (m *multiline) value() string {
	if m.top && m.indent {
		return strings.Join(dedent(m.lines), "\n")
	}
	return strings.Join(m.lines, "\n")
}

// size is the bytes the value holds.
func (m *multiline) size() int {
	n := 0
	for _, l := range m.lines {
		n += len(l) + 1
	}
	return n
}

// dedent removes the indentation of the least indented line that is not
// blank, as terraform reads a "<<-" heredoc.
func dedent(lines []string) []string {
	least := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if least < 0 || n < least {
			least = n
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		switch {
		case strings.TrimSpace(l) == "":
			l = ""
		case least > 0:
			l = l[least:]
		}
		out[i] = l
	}
	return out
}

// LeafValues returns the values inside a value over several lines, one per
// line ("user" = "admin" gives admin; "a", gives a), unquoted: a secret map
// is masked value by value wherever one is printed, not only as a whole.
func LeafValues(v string) []string {
	var leaves []string
	for _, line := range strings.Split(v, "\n") {
		t := strings.TrimSpace(line)
		if i := strings.LastIndex(t, " = "); i >= 0 {
			t = t[i+3:]
		}
		t = unquote(strings.TrimSuffix(t, ","))
		if t != "" && !openerRE.MatchString(t) && bracketDelta(t) == 0 && !heredocRE.MatchString(t) {
			leaves = append(leaves, t)
		}
	}
	return leaves
}
