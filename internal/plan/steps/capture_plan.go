package steps

import (
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
type planOutputs struct {
	// in marks the block, until its blank line.
	in bool
	// depth counts the brackets still open of a secret's value over
	// several lines (a map, a list), whose lines are hidden; heredoc the
	// marker that ends one written as a heredoc.
	depth   int
	heredoc string
}

// line takes one line of output and returns it as shown; hide says the
// line is not shown at all (inside a secret's value). Values read are
// taught to the masker.
func (p *planOutputs) line(text string, secretKeys map[string]bool, masker *secret.Masker) (shown string, hide bool) {
	plain := strings.TrimSpace(component.StripANSI(text))
	switch {
	case p.heredoc != "":
		if plain == p.heredoc {
			p.heredoc = ""
		} else {
			masker.Add(plain)
		}
		return "", true
	case p.depth > 0:
		if strings.HasPrefix(plain, "}") || strings.HasPrefix(plain, "]") {
			p.depth--
		}
		if strings.HasSuffix(plain, "{") || strings.HasSuffix(plain, "[") {
			p.depth++
		}
		item := plain
		if len(item) > 2 && strings.ContainsRune("+~-", rune(item[0])) && item[1] == ' ' {
			item = item[2:]
		}
		if _, v, ok := strings.Cut(item, "="); ok {
			item = v
		}
		for _, part := range strings.Split(strings.TrimSuffix(item, ","), " -> ") {
			learn(masker, part)
		}
		return "", true
	case plain == "Changes to Outputs:":
		p.in = true
		return text, false
	case !p.in:
		return text, false
	case plain == "":
		p.in = false
		return text, false
	}
	body, marker := plain, ""
	if len(body) > 2 && strings.ContainsRune("+~-", rune(body[0])) && body[1] == ' ' {
		marker, body = body[:2], body[2:]
	}
	k, v, ok := strings.Cut(body, "=")
	if !ok {
		return text, false
	}
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if !secretKeys[k] && !manifest.LooksSecret(k) {
		return text, false
	}
	switch {
	case strings.HasPrefix(v, "<<"):
		p.heredoc = strings.TrimLeft(v, "<-")
	case strings.HasSuffix(v, "{") || strings.HasSuffix(v, "["):
		p.depth = 1
	default:
		for _, part := range strings.Split(v, " -> ") {
			learn(masker, part)
		}
	}
	indent := text[:len(text)-len(strings.TrimLeft(text, " \t"))]
	return indent + marker + k + " = " + secret.Mask, false
}

// learn teaches the masker a value as terraform prints it: quoted, or a
// bare number or word; not what stands for no value.
func learn(masker *secret.Masker, v string) {
	v = strings.TrimSpace(v)
	if v == "" || v == "null" || v == "{" || v == "[" || strings.HasPrefix(v, "(") {
		return
	}
	masker.Add(strings.Trim(v, `"`))
}
