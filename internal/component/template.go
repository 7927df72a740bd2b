// Package component runs components: it finds a component's implementation,
// renders its templates, runs its processes in their own process groups and
// captures their outputs.
package component

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gantry-dev/gantry/internal/atomicfile"
	"github.com/gantry-dev/gantry/internal/inputfile"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
)

// Template kinds.
const (
	TemplateCurly    = "curly"
	TemplateMustache = "mustache"
	TemplateGo       = "go"
)

// Suffixes that mark template files; the rendered file drops them.
const (
	TemplateSuffix   = ".template"
	GoTemplateSuffix = ".gotemplate"
)

// TemplateError is a template that cannot be rendered, at file:line:col.
type TemplateError struct {
	Pos manifest.Pos
	Msg string
}

func (e *TemplateError) Error() string { return e.Pos.String() + ": " + e.Msg }

// Rendered is one rendered template.
type Rendered struct {
	Template string // path of the template
	Output   string // path of the rendered file next to it
	// Secret is set when the template received a secret value (or one
	// computed from a secret): the rendered file is then written 0600.
	Secret bool
}

// TemplateFiles lists a component's template files: the files matching its
// templates.files globs and the *.template / *.gotemplate files below its
// templates.directories, relative to the component directory, sorted. A
// pattern, template or rendered file that leads out of the component folder
// is an error, and so is a template that is no regular file (a named pipe,
// a device, a link to one): it would be skipped in silence, its file not
// rendered.
func TemplateFiles(dir string, t *manifest.Templates) ([]string, error) {
	if t == nil {
		return nil, nil
	}
	root, err := realDir(dir)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	var errs []error
	for _, pattern := range t.Files {
		if err := localPath(pattern, "templates.files"); err != nil {
			errs = append(errs, err)
			continue
		}
		matches, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			errs = append(errs, fmt.Errorf("templates.files %q: %w", pattern, err))
			continue
		}
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && !fi.IsDir() {
				if err := templateFile(root, m, fi.Mode()); err != nil {
					errs = append(errs, err)
					continue
				}
				set[m] = true
			}
		}
	}
	for _, d := range t.Directories {
		if err := localPath(d, "templates.directories"); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, d)); errors.Is(err, fs.ErrNotExist) {
			// A folder the checkout lacks holds no templates, as a glob
			// of templates.files that matches nothing: stacks list every
			// cloud's ([., aws, azure, gcp]), and the Hub goes on.
			continue
		}
		start, err := confined(root, filepath.Join(dir, d), "templates.directories "+strconv.Quote(d)+":")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		err = filepath.WalkDir(start, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() || !strings.HasSuffix(path, TemplateSuffix) && !strings.HasSuffix(path, GoTemplateSuffix) {
				return nil
			}
			if !e.Type().IsRegular() {
				// A link (followed: one to a template of the component
				// renders), a pipe or a device: said, not skipped.
				fi, err := os.Stat(path)
				if err != nil {
					errs = append(errs, fmt.Errorf("templates.directories %q: %w", d, err))
					return nil
				}
				if err := templateFile(root, path, fi.Mode()); err != nil {
					errs = append(errs, err)
					return nil
				}
			}
			// Named below the folder as the manifest names it, so a
			// linked folder renders where its users look.
			rel, err := filepath.Rel(start, path)
			if err != nil {
				return err
			}
			set[filepath.Join(dir, d, rel)] = true
			return nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("templates.directories %q: %w", d, err))
		}
	}
	all := make([]string, 0, len(set))
	for f := range set {
		all = append(all, f)
	}
	sort.Strings(all)
	files := make([]string, 0, len(all))
	for _, f := range all {
		if _, err := confined(root, f, "template"); err != nil {
			errs = append(errs, err)
			continue
		}
		if out, err := OutputName(f); err == nil {
			if err := confinedOutput(root, out); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		files = append(files, f)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return files, nil
}

// OutputName is the rendered file of a template: its name without the
// .template or .gotemplate suffix.
func OutputName(path string) (string, error) {
	switch {
	case strings.HasSuffix(path, GoTemplateSuffix):
		return strings.TrimSuffix(path, GoTemplateSuffix), nil
	case strings.HasSuffix(path, TemplateSuffix):
		return strings.TrimSuffix(path, TemplateSuffix), nil
	}
	return "", fmt.Errorf("template %s has no %s or %s suffix; rendering it would overwrite it", path, TemplateSuffix, GoTemplateSuffix)
}

// KindOf is the template kind of a file: .gotemplate files are Go templates,
// others the kind the manifest declares (curly when it declares none).
func KindOf(path, declared string) string {
	if strings.HasSuffix(path, GoTemplateSuffix) {
		return TemplateGo
	}
	if declared == "" {
		return TemplateCurly
	}
	return declared
}

// Template is a template file of a component, with its kind.
type Template struct {
	Path string // as TemplateFiles names it
	Kind string // TemplateCurly, TemplateMustache or TemplateGo
}

// Declared are the template files a component's manifest declares, which
// are rendered before each verb: those of templates: (TemplateFiles), then
// those of each of its extra targets, each with its kind (KindOf). A target
// whose files cannot be listed is left out, and its error returned, with
// the others', joined.
func Declared(dir string, t *manifest.Templates) ([]Template, error) {
	if t == nil {
		return nil, nil
	}
	var out []Template
	var errs []error
	for _, target := range append([]manifest.Templates{*t}, extraTargets(t)...) {
		paths, err := TemplateFiles(dir, &target)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range paths {
			out = append(out, Template{Path: f, Kind: KindOf(f, target.Kind)})
		}
	}
	return out, errors.Join(errs...)
}

// RenderFiles renders every template of a component next to itself and, when
// genDir is set, a copy below genDir at the same relative path. lookup is the
// template chain for lookupfile and lookupdir (the component's folder first).
// Every error is returned, joined.
func RenderFiles(dir, genDir string, t *manifest.Templates, exp *params.Expanded, lookup []string) ([]Rendered, error) {
	if t == nil {
		return nil, nil
	}
	files, err := Declared(dir, t)
	if err != nil {
		return nil, err
	}
	var out []Rendered
	var errs []error
	for _, kf := range files {
		r, err := RenderFile(kf.Path, kf.Kind, exp, lookup)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if genDir != "" {
			rel, err := filepath.Rel(dir, r.Output)
			if err == nil && !strings.HasPrefix(rel, "..") {
				if err := copyRendered(r.Output, filepath.Join(genDir, rel)); err != nil {
					errs = append(errs, err)
				}
			}
		}
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

// CheckTemplates reports, without rendering anything, what would keep a
// component's templates from rendering: a pattern or a folder that leads
// out of its folder, or a file templates.files matches that has no
// .template or .gotemplate suffix (rendering it would overwrite it). Every
// problem, joined. A folder templates.directories names that is not there
// is left to the run (a checkout may bring it; manifests list a folder per
// cloud). A curly template's text is parsed and its expressions compiled;
// a Go template's text is parsed; a mustache template is rendered with
// every name empty. checkRef, when not nil, says what is wrong with a
// ${…} reference of a curly template ("" when nothing is): a curly
// template has no sections, so each of them is read on every render (a
// mustache section or a Go template's if may never be).
func CheckTemplates(dir string, t *manifest.Templates, checkRef func(params.Part) string) error {
	if t == nil {
		return nil
	}
	var errs []error
	for _, target := range append([]manifest.Templates{*t}, extraTargets(t)...) {
		paths, err := TemplateFiles(dir, &target)
		if err != nil {
			for _, e := range joined(err) {
				if !errors.Is(e, fs.ErrNotExist) {
					errs = append(errs, e)
				}
			}
			continue
		}
		for _, f := range paths {
			if _, err := OutputName(f); err != nil {
				errs = append(errs, err)
				continue
			}
			switch KindOf(f, target.Kind) {
			case TemplateCurly:
				errs = append(errs, checkCurly(f, checkRef)...)
			case TemplateGo:
				errs = append(errs, checkGo(f)...)
			case TemplateMustache:
				errs = append(errs, checkMustache(f)...)
			}
		}
	}
	return errors.Join(errs...)
}

// checkCurly parses a curly template and compiles its expressions, as a
// render does first: a mistake of its text is found before anything runs,
// at its line and column. A file that cannot be read is the render's to
// report.
func checkCurly(path string, checkRef func(params.Part) string) []error {
	data, err := readTemplate(path)
	if err != nil {
		return nil
	}
	src := string(data)
	t, err := params.Parse(src)
	if err != nil {
		var se *params.SyntaxError
		if errors.As(err, &se) {
			return []error{&TemplateError{Pos: posAt(path, src, se.Offset), Msg: se.Msg}}
		}
		return []error{err}
	}
	var errs []error
	for _, p := range t.Parts {
		if p.Kind == params.Ref && checkRef != nil {
			if msg := checkRef(p); msg != "" {
				errs = append(errs, &TemplateError{Pos: posAt(path, src, p.Offset), Msg: msg})
			}
		}
		if p.Kind != params.Expr {
			continue
		}
		if err := params.CheckExpr(p.Text); err != nil {
			// One line: the position says where, a caret would not.
			msg := err.Error()
			var ee *params.ExprError
			if errors.As(err, &ee) {
				msg = "#{" + ee.Expr + "}: " + ee.Msg
			}
			errs = append(errs, &TemplateError{Pos: posAt(path, src, p.Offset), Msg: msg})
		}
	}
	return errs
}

// joined are the errors errors.Join made err of, or err alone.
func joined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// TemplatesWhere says where a component's templates are looked for, when
// none is found: `no file matches "*.template"; folder "templates" holds no
// *.template or *.gotemplate file`.
func TemplatesWhere(t *manifest.Templates) string {
	var files, dirs []string
	for _, target := range append([]manifest.Templates{*t}, extraTargets(t)...) {
		for _, f := range target.Files {
			files = append(files, strconv.Quote(f))
		}
		for _, d := range target.Directories {
			dirs = append(dirs, strconv.Quote(d))
		}
	}
	var parts []string
	if len(files) > 0 {
		parts = append(parts, "no file matches "+strings.Join(files, " or "))
	}
	switch len(dirs) {
	case 0:
	case 1:
		parts = append(parts, "folder "+dirs[0]+" holds no *.template or *.gotemplate file")
	default:
		parts = append(parts, "folders "+strings.Join(dirs, ", ")+" hold no *.template or *.gotemplate file")
	}
	if len(parts) == 0 {
		return "none is listed"
	}
	return strings.Join(parts, "; ")
}

// extraTargets are templates.extra as sets of templates of their own.
func extraTargets(t *manifest.Templates) []manifest.Templates {
	out := make([]manifest.Templates, len(t.Extra))
	for i, e := range t.Extra {
		out[i] = manifest.Templates{Pos: e.Pos, Kind: e.Kind, Files: e.Files, Directories: e.Directories}
	}
	return out
}

// RenderFile renders one template file of the given kind next to itself,
// keeping the template's file mode — except that a file that received a
// secret is readable by its owner only (0600): the template's mode was
// chosen for the template, which holds none.
func RenderFile(path, kind string, exp *params.Expanded, lookup []string) (Rendered, error) {
	outPath, err := OutputName(path)
	if err != nil {
		return Rendered{}, err
	}
	src, err := readTemplate(path)
	if err != nil {
		return Rendered{}, err
	}
	text, secret, err := render(path, string(src), kind, exp, lookup)
	if err != nil {
		return Rendered{}, err
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if secret {
		mode = mode&0o100 | 0o600 // an executable template stays executable by its owner
	}
	if err := atomicfile.Write(outPath, []byte(text), mode, false); err != nil {
		return Rendered{}, fmt.Errorf("write %s: %w", outPath, err)
	}
	return Rendered{Template: path, Output: outPath, Secret: secret}, nil
}

// RenderString renders template text; name is its file, for positions.
func RenderString(name, src, kind string, exp *params.Expanded, lookup []string) (string, error) {
	out, _, err := render(name, src, kind, exp, lookup)
	return out, err
}

// render renders template text and reports whether it received a secret.
// Curly and mustache templates read values through a resolver that tracks
// secrets; a Go template's data holds every value of the component (and
// {{ . }} prints them all), so it counts as receiving the component's
// secrets when it has any, and one that hashes a value with bcrypt holds
// a password's hash, whatever the value's name says.
func render(name, src, kind string, exp *params.Expanded, lookup []string) (string, bool, error) {
	r, readSecret := exp.SecretTracking()
	var out string
	var err error
	hashed := false // a Go template called bcrypt
	switch kind {
	case TemplateCurly:
		out, err = renderCurly(name, src, r)
	case TemplateMustache:
		out, err = renderMustache(name, src, r)
	case TemplateGo:
		out, hashed, err = renderGo(name, src, exp, r, lookup)
	default:
		return "", false, fmt.Errorf("%s: unknown template kind %q", name, kind)
	}
	secret := readSecret() || hashed || kind == TemplateGo && exp.HasSecrets()
	if err != nil && secret {
		err = withheldCall(err)
	}
	return out, secret, withSuggestion(err, exp)
}

// withheldCall drops what a function a template called said when it failed
// (error calling atoi: strconv.Atoi: parsing "…"), in a template that reads
// a secret: it quotes its argument, which may be the secret or made from it.
// Expressions withhold their own messages (params).
func withheldCall(err error) error {
	var te *TemplateError
	if !errors.As(err, &te) {
		return err
	}
	if m := goErrCalling.FindStringSubmatch(te.Msg); m != nil {
		te.Msg = "error calling " + m[1] + ": its message is withheld, as the template reads a secret and the message may show it"
	}
	return err
}

// withSuggestion adds a did-you-mean to an unknown name in a template error.
func withSuggestion(err error, exp *params.Expanded) error {
	var te *TemplateError
	if err == nil || !errors.As(err, &te) || strings.Contains(te.Msg, "did you mean") {
		return err
	}
	const prefix = "unknown parameter "
	i := strings.Index(te.Msg, prefix)
	if i < 0 {
		return err
	}
	name := te.Msg[i+len(prefix):]
	if j := strings.IndexAny(name, " ;"); j >= 0 {
		name = name[:j]
	}
	unq, uerr := strconv.Unquote(name)
	if uerr != nil {
		return err
	}
	switch s := exp.Suggest(unq); {
	case s == unq:
		// Known, but not as a field: .NAME holds the component's own
		// parameters, and param reads the others (a Go template).
		te.Msg = strings.Replace(te.Msg, name, fmt.Sprintf("%s (.NAME holds the component's own parameters; read the others with {{ param %q }})", name, unq), 1)
	case s != "":
		te.Msg = strings.Replace(te.Msg, name, fmt.Sprintf("%s (did you mean %q?)", name, s), 1)
	}
	return err
}

// renderCurly substitutes ${name} (with encodings) and #{expr}. As the Hub
// CLI does, ${name} substitutes the value trimmed of leading and trailing
// white space, and ${name/encoding} encodes the value as it is; an
// expression reads trimmed values. The whole render shares one budget: each
// substitution is bounded, and so is their sum.
func renderCurly(name, src string, r params.Resolver) (string, error) {
	budget := params.NewBudget()
	raw, trimmed := params.WithBudget(r, budget), params.WithBudget(trimmingResolver{r}, budget)
	t, err := params.Parse(src)
	if err != nil {
		var se *params.SyntaxError
		if errors.As(err, &se) {
			return "", &TemplateError{Pos: posAt(name, src, se.Offset), Msg: se.Msg}
		}
		return "", err
	}
	b := &cappedBuffer{max: renderLimits.rendered}
	for _, p := range t.Parts {
		v := p.Text
		if p.Kind != params.Literal {
			one := &params.Template{Src: src, Parts: []params.Part{p}}
			r := trimmed
			if p.Kind == params.Ref && len(p.Encodings) > 0 {
				r = raw
			}
			var err error
			if v, err = one.Eval(r); err != nil {
				return "", &TemplateError{Pos: posAt(name, src, p.Offset), Msg: err.Error()}
			}
		}
		if _, err := b.WriteString(v); err != nil {
			return "", &TemplateError{Pos: posAt(name, src, p.Offset), Msg: err.Error()}
		}
	}
	return b.String(), nil
}

// trimmingResolver gives values trimmed of leading and trailing white space
// (params.Trimmed).
type trimmingResolver struct{ params.Resolver }

func (t trimmingResolver) Lookup(name string) (string, error) {
	v, err := t.Resolver.Lookup(name)
	return params.Trimmed(v), err
}

// SecretRead reports whether the resolver it trims has read a secret.
func (t trimmingResolver) SecretRead() bool { return params.ReadsSecret(t.Resolver) }

func (t trimmingResolver) Output(comp, name string) (string, error) {
	v, err := t.Resolver.Output(comp, name)
	return params.Trimmed(v), err
}

// posAt converts a byte offset of src to a position.
func posAt(name, src string, offset int) manifest.Pos {
	if offset > len(src) {
		offset = len(src)
	}
	line := 1 + strings.Count(src[:offset], "\n")
	col := offset - strings.LastIndexByte(src[:offset], '\n')
	return manifest.Pos{File: name, Line: line, Col: col}
}

// readTemplate reads a template's source, refusing one past
// maxTemplateBytes before reading it whole.
func readTemplate(path string) ([]byte, error) {
	src, err := inputfile.Read(path, maxTemplateBytes)
	var tl *inputfile.TooLargeError
	if errors.As(err, &tl) {
		return nil, fmt.Errorf("template %s is larger than %d bytes", path, maxTemplateBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("read template %s: %s", path, inputfile.Problem(err))
	}
	return src, nil
}

func copyRendered(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(to, data, 0o600, false)
}

// LookupFile finds a file along a template chain: the component's folder
// first, the base template last (sow's env.lookupfile). rel must stay inside
// the chain's folders: absolute paths, ".." and links that lead out are
// refused.
func LookupFile(chain []string, rel string, dir bool) (string, error) {
	what := "lookupfile"
	if dir {
		what = "lookupdir"
	}
	if err := localPath(rel, what); err != nil {
		return "", err
	}
	for _, d := range chain {
		p := filepath.Join(d, rel)
		if fi, err := os.Stat(p); err != nil || fi.IsDir() != dir {
			continue
		}
		root, err := realDir(d)
		if err != nil {
			return "", err
		}
		if _, err := confined(root, p, what+" "+strconv.Quote(rel)+":"); err != nil {
			return "", err
		}
		return p, nil
	}
	kind := "file"
	if dir {
		kind = "folder"
	}
	return "", fmt.Errorf("no %s %s in %s", kind, rel, strings.Join(chain, ", "))
}

// templateFile refuses a template that is no regular file, mode being what
// it leads to: first as a link out of the component (a link to /dev/zero
// leads out), else as what it is.
func templateFile(root, path string, mode fs.FileMode) error {
	if mode.IsRegular() {
		return nil
	}
	if _, err := confined(root, path, "template"); err != nil {
		return err
	}
	return fmt.Errorf("template %s %s: a template must be a regular file", path, inputfile.Describe(mode))
}
