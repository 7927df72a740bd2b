package component

import (
	"errors"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/template"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
)

// renderGo renders a Go text/template. The data is the component's parameters
// as nested maps split on dots, with "-" in names turned into "_" (so
// db.host is {{ .db.host }} and auth-service.key is {{ .auth_service.key }});
// param "name" and output "component" "name" reach anything in scope. A
// missing key is an error at its file:line:col. r serves param and output.
// Values are trimmed of leading and trailing white space, as the Hub CLI
// trims them. hashed reports that the template called bcrypt: what it
// rendered holds a password's hash, which is as secret as the password.
func renderGo(name, src string, exp *params.Expanded, r params.Resolver, lookup []string) (out string, hashed bool, err error) {
	funcs := funcMap()
	funcs["bcrypt"] = func(s string) (string, error) {
		hashed = true
		return bcryptHash(s)
	}
	tr := trimmingResolver{r}
	funcs["param"] = func(n string) (string, error) { return tr.Lookup(n) }
	funcs["output"] = func(c, n string) (string, error) { return tr.Output(c, n) }
	if len(lookup) == 0 {
		lookup = []string{filepath.Dir(name)}
	}
	funcs["lookupfile"] = func(rel string) (string, error) { return LookupFile(lookup, rel, false) }
	funcs["lookupdir"] = func(rel string) (string, error) { return LookupFile(lookup, rel, true) }
	data := map[string]any{}
	for _, v := range exp.Values {
		setNested(data, v.Name, params.Trimmed(v.Value))
	}
	out, budget, err := runGo(name, src, funcs, data)
	if err != nil {
		var limit *LimitError
		if errors.As(err, &limit) && !goErrPos.MatchString(err.Error()) {
			// Writing past the cap has no place of its own: blame the
			// loop or template call that ran last.
			return "", hashed, &TemplateError{Pos: posAt(name, src, budget.at), Msg: limit.Msg}
		}
		return "", hashed, goTemplateError(name, err)
	}
	return out, hashed, nil
}

// checkGo parses a Go template as a render does first, with its functions
// named, so that a mistake of its text is found before anything runs. A
// file that cannot be read is the render's to report.
func checkGo(path string) []error {
	data, err := readTemplate(path)
	if err != nil {
		return nil
	}
	funcs := funcMap()
	for _, name := range []string{"param", "output", "lookupfile", "lookupdir"} {
		funcs[name] = func(...string) (string, error) { return "", nil }
	}
	if _, err := template.New(path).Option("missingkey=error").Funcs(funcs).Parse(string(data)); err != nil {
		return []error{goTemplateError(path, err)}
	}
	return nil
}

// runGo parses a Go template with funcs (missing keys are errors) and runs
// it with data under a fresh budget: every function is measured, loops and
// template calls pay (instrument), and the text it renders is capped. The
// error is text/template's, or a *LimitError.
func runGo(name, src string, funcs template.FuncMap, data any) (string, *renderBudget, error) {
	budget := newRenderBudget()
	for n, f := range funcs {
		funcs[n] = budget.wrap(n, f)
	}
	funcs[tickFunc] = budget.tick
	funcs[chargeFunc] = budget.charge
	t, err := template.New(name).Option("missingkey=error").Funcs(funcs).Parse(src)
	if err != nil {
		return "", budget, err
	}
	instrument(t)
	out := &cappedBuffer{max: renderLimits.rendered}
	if err := t.Execute(out, data); err != nil {
		return "", budget, err
	}
	return out.String(), budget, nil
}

// builtinsBounded are text/template's functions that funcMap replaces with
// bounded ones (the printing and escaping ones), picked once: funcMap
// makes a hundred closures.
var builtinsBounded = func() template.FuncMap {
	all := funcMap()
	out := template.FuncMap{}
	for _, n := range []string{"print", "printf", "println", "html", "js", "urlquery"} {
		out[n] = all[n]
	}
	return out
}()

// ExecuteGo runs a Go text/template with data and text/template's own
// functions only, under the bounds of a component's templates: a
// lifecycle step's arguments (seed 001's {{.component}}) can no more hang
// gantry or exhaust its memory than a template file can. The error is
// text/template's, or a *LimitError when a bound was crossed.
func ExecuteGo(name, src string, data any) (string, error) {
	funcs := make(template.FuncMap, len(builtinsBounded)+2) // runGo wraps them in this run's budget
	for n, f := range builtinsBounded {
		funcs[n] = f
	}
	out, _, err := runGo(name, src, funcs, data)
	var limit *LimitError
	if errors.As(err, &limit) {
		return "", limit
	}
	return out, err
}

func setNested(m map[string]any, name, value string) {
	parts := strings.Split(strings.ReplaceAll(name, "-", "_"), ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	last := parts[len(parts)-1]
	if _, isMap := m[last].(map[string]any); !isMap {
		m[last] = value
	}
}

var goErrCalling = regexp.MustCompile(`^error calling (\w+): (.*)$`)

var goErrPos = regexp.MustCompile(`^template: ([^:]+):(\d+):?(\d+)?: (.*)$`)

// goTemplateError rewrites text/template's "template: name:3:5: msg" into a
// positioned error, and its missing-key message into gantry's words.
func goTemplateError(name string, err error) error {
	msg := err.Error()
	var limit *LimitError
	if errors.As(err, &limit) {
		// The bound crossed, at the call or loop that crossed it.
		if m := goErrPos.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[2])
			col, _ := strconv.Atoi(m[3])
			return &TemplateError{Pos: manifest.Pos{File: name, Line: line, Col: col}, Msg: limit.Msg}
		}
	}
	m := goErrPos.FindStringSubmatch(msg)
	if m == nil {
		return &TemplateError{Pos: manifest.Pos{File: name}, Msg: msg}
	}
	line, _ := strconv.Atoi(m[2])
	col, _ := strconv.Atoi(m[3])
	text := m[4]
	if i := strings.Index(text, "map has no entry for key "); i >= 0 {
		key := strings.Trim(text[i+len("map has no entry for key "):], `"`)
		text = "unknown parameter " + strconv.Quote(key)
		if j := strings.Index(m[4], "executing"); j >= 0 {
			if k := strings.Index(m[4], "at <"); k >= 0 {
				if e := strings.Index(m[4][k:], ">"); e > 0 {
					text += " in " + m[4][k+3:k+e+1]
				}
			}
		}
	} else if i := strings.Index(text, ": "); strings.HasPrefix(text, "executing") && i >= 0 {
		text = text[i+2:]
	}
	// "error calling lookupfile: lookupfile …": the function's own error
	// already names it.
	if m := goErrCalling.FindStringSubmatch(text); m != nil && strings.HasPrefix(m[2], m[1]) {
		text = m[2]
	}
	return &TemplateError{Pos: manifest.Pos{File: name, Line: line, Col: col}, Msg: text}
}
