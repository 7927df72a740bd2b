package steps

import (
	"strconv"
	"strings"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/secret"
)

// terraform's plan lists, under "Changes to Outputs:", the outputs whose
// values it knows before the apply ("+ conn = \"user:pw\"", "~ conn =
// \"old\" -> \"new\""): before `terraform output` tells gantry the value
// of a secret output, it would be shown there in clear. planOutputs hides
// the values of secret outputs (declared so, or named so) in that block.
// A value over several lines (a map, a list, jsonencode(…), a heredoc) is
// every line after its entry indented deeper than the entry, as terraform
// renders it: its content, whatever brackets it holds, never ends it.
type planOutputs struct {
	// in marks the block: from its header to a blank line, or a line
	// that is not indented.
	in bool
	// hiding marks a secret's value over several lines, whose entry is
	// indented by indent: the lines deeper than it are hidden.
	hiding bool
	indent int
	// heredoc is the marker that ends a secret's value written as a
	// heredoc ("EOT"), whose lines are its text; "" for none.
	heredoc string
	// nested is the marker of a heredoc inside such a value.
	nested string
}

// line takes one line of output and returns it as shown; hide says the
// line is not shown at all (inside a secret's value). The quoted values of
// a secret are taught to the masker.
func (p *planOutputs) line(text string, secretKeys map[string]bool, masker *secret.Masker) (shown string, hide bool) {
	if !p.in && !p.hiding && !strings.Contains(text, "Changes to Outputs:") {
		return text, false // every other line of every component: nothing to strip
	}
	plain := component.StripANSI(text)
	t := strings.TrimSpace(plain)
	indent := len(plain) - len(strings.TrimLeft(plain, " \t"))
	if p.hiding {
		switch {
		case p.heredoc != "" && (t == "" || indent > p.indent):
			// A heredoc's text, as it is, blank lines too.
			if t != p.heredoc {
				learnText(masker.AddComputed, t)
			}
			return "", true
		case t != "" && indent > p.indent:
			switch {
			case p.nested != "":
				// A heredoc inside the value (a map's certificate).
				if t == p.nested {
					p.nested = ""
				} else {
					learnText(masker.AddComputed, t)
				}
			default:
				if _, v, ok := strings.Cut(t, "= <<"); ok {
					p.nested = strings.TrimLeft(v, "-~")
				}
				learnQuoted(masker.AddComputed, t)
			}
			return "", true
		}
		p.hiding, p.heredoc, p.nested = false, "", ""
	}
	switch {
	case t == "Changes to Outputs:":
		p.in = true
		return text, false
	case !p.in:
		return text, false
	case t == "" || indent == 0:
		p.in = false
		return text, false
	}
	body, marker := t, ""
	if len(body) > 2 && strings.ContainsRune("+~-", rune(body[0])) && body[1] == ' ' {
		marker, body = body[:2], body[2:]
	}
	k, v, ok := strings.Cut(body, "=")
	if !ok {
		return text, false
	}
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if strings.ContainsAny(k, " \t\"") || !secretKeys[k] && !manifest.LooksSecret(k) {
		return text, false
	}
	// A value that goes on below: its lines are deeper than this one.
	p.hiding, p.indent = true, indent
	if strings.HasPrefix(v, "<<") {
		p.heredoc = strings.TrimLeft(v, "<-~")
	}
	// The value on the entry's line is the secret whole ("old" -> "new"
	// two of them); the pieces of one over several lines are learned as
	// values computed from it (long enough to mean something).
	learnQuoted(masker.Add, v)
	return plain[:indent] + marker + k + " = " + secret.Mask, false
}

// learnQuoted teaches add (the masker) the quoted strings of a line of a value
// as terraform prints it ("v", k = "v", "old" -> "new"): not brackets,
// markers, numbers or what stands for no value, which would mask every
// "}" of the run.
func learnQuoted(add func(...string), line string) {
	if _, v, ok := strings.Cut(line, "= "); ok {
		line = v
	} else if len(line) > 2 && strings.ContainsRune("+~-", rune(line[0])) && line[1] == ' ' {
		line = line[2:] // a list's item
	}
	for _, part := range strings.Split(line, " -> ") {
		part = strings.TrimSuffix(strings.TrimSpace(part), ",")
		if len(part) < 2 || part[0] != '"' || part[len(part)-1] != '"' {
			continue
		}
		s, err := strconv.Unquote(part)
		if err != nil {
			s = part[1 : len(part)-1]
		}
		learnText(add, s)
	}
}

// learnText teaches add (the masker) a piece of a secret that holds a letter or
// a digit: punctuation alone ("}") would mask every one of the run.
func learnText(add func(...string), s string) {
	if strings.ContainsFunc(s, func(r rune) bool {
		return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127
	}) {
		add(s)
	}
}
