package kubernetes

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/gantry-dev/gantry/internal/params"
)

// errExpansion stops a kustomize build whose generator inputs could not be
// expanded: the view's own errors say why, each at its line.
var errExpansion = errors.New("the parameters of a generator's input could not be expanded")

// use is a way a kustomization names a file, which says how kustomize
// reads it. A file named more than one way (a configMapGenerator's and a
// secretGenerator's, or a generator's and a resource) is read as it is.
type use uint8

const (
	// useConfigMapFile: a configMapGenerator's files:, a whole value;
	// expanded.
	useConfigMapFile use = 1 << iota
	// useConfigMapEnv: a configMapGenerator's envs: or env:, KEY=VALUE
	// lines; expanded.
	useConfigMapEnv
	// useSecret: a secretGenerator's; read as it is.
	useSecret
	// useOther: a resource, patch, component, ...; read as it is.
	useOther
)

// kustomizeFS is the file system a kustomize build reads through: the
// disk, with the parameters in the generators' inputs — configMapGenerator's
// and secretGenerator's literals (and those of the builtin generators'
// configs that generators: names), and the files a configMapGenerator's
// files:, envs: and env: name — expanded before kustomize reads them. So
// the hash suffix of a generated ConfigMap covers the final data (a changed
// parameter renames it and rolls what uses it), a Secret holds the value
// and not "${...}", and every value is a string, as a generator makes it.
// The files a secretGenerator names go in as they are: they hold passwords
// and the app's own placeholders (${DB_PASS}), which gantry never expanded
// (a Secret's data is base64 when the build's objects are expanded).
type kustomizeFS struct {
	filesys.FileSystem
	// expand expands one string; nil: nothing is expanded.
	expand expandFunc
	// base is the component folder as kustomize sees it (symlinks
	// resolved): messages name files relative to it.
	base string
	// uses are the ways the kustomizations met so far name each file, by
	// the path kustomize reads it with: a kustomization is read before
	// the files it names.
	uses map[string]use
	// configs are the files generators: names (a builtin generator's
	// config), and the folders of the kustomizations that name each: its
	// generator reads its files relative to them.
	configs map[string][]string
	errs    []error
	// outside are the files read outside the component folder (a base
	// at ../../base), by their path from base: the component's
	// fingerprint covers them.
	outside map[string]bool
	// quoted and plain are the scalars of the resources read that are
	// exactly one reference ("${port}"), written in quotes and plain: the
	// build's output quotes only what needs it, so that the type a value
	// takes once expanded is told by how its source wrote it (quotedOnly).
	quoted, plain map[string]bool
}

// newKustomizeFS returns the view of the disk a build of the component
// folder dir reads through.
func newKustomizeFS(dir string, expand expandFunc) *kustomizeFS {
	base, err := filepath.EvalSymlinks(dir)
	if err != nil {
		base = dir
	}
	return &kustomizeFS{FileSystem: filesys.MakeFsOnDisk(), expand: expand, base: base, uses: map[string]use{}, configs: map[string][]string{}, outside: map[string]bool{},
		quoted: map[string]bool{}, plain: map[string]bool{}}
}

// ReadFile reads a file as kustomize should see it.
func (f *kustomizeFS) ReadFile(path string) ([]byte, error) {
	data, err := f.FileSystem.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if r := f.rel(path); r == ".." || strings.HasPrefix(r, "../") || filepath.IsAbs(r) {
		f.outside[r] = true
	}
	if slices.Contains(kustomizationFiles, filepath.Base(path)) {
		return f.kustomization(path, data), nil
	}
	u := f.uses[path]
	if u&^useOther == 0 && f.expand != nil && bytes.Contains(data, []byte("builtin")) && HasRef(string(data)) {
		// Perhaps builtin generators' configs (generators:, or the
		// resources of a kustomization it names): only those are
		// touched, nothing that could be applied.
		errs := len(f.errs)
		data = f.generatorConfigs(path, data, f.configs[path], 0)
		if len(f.errs) > errs {
			return nil, errExpansion
		}
		f.noteRefs(data)
		return data, nil
	}
	if u != useConfigMapFile && u != useConfigMapEnv || f.expand == nil || !utf8.Valid(data) {
		// Binary files go into binaryData as they are.
		if u&^useOther == 0 && f.expand != nil && HasRef(string(data)) {
			f.noteRefs(data)
		}
		return data, nil
	}
	out, ok := f.expandLines(path, string(data), u == useConfigMapEnv)
	if !ok {
		return nil, errExpansion
	}
	return []byte(out), nil
}

// noteRefs notes how the YAML documents of a file kustomize reads as it
// is (a resource, a patch) write their scalars that are exactly one
// reference: quoted or plain. A file that is not YAML is not a resource.
func (f *kustomizeFS) noteRefs(data []byte) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && singleRef(n.Value) {
			if n.Style&scalarStyles == 0 {
				f.plain[n.Value] = true
			} else {
				f.quoted[n.Value] = true
			}
		}
		if n.Kind != yaml.AliasNode {
			for _, c := range n.Content {
				walk(c)
			}
		}
	}
	for {
		var doc yaml.Node
		if dec.Decode(&doc) != nil {
			return
		}
		walk(&doc)
	}
}

// quotedOnly reports whether a scalar of the build's output that is
// exactly one reference was written in quotes in every resource that has
// it: it stays a string once expanded, as it would outside kustomize.
func (f *kustomizeFS) quotedOnly(s string) bool { return f.quoted[s] && !f.plain[s] }

// rel names a file in messages: relative to the component folder.
func (f *kustomizeFS) rel(path string) string {
	if r, err := filepath.Rel(f.base, path); err == nil {
		return filepath.ToSlash(r)
	}
	return path
}

// errorf notes an error at a line and column of a file.
func (f *kustomizeFS) errorf(path string, line, col int, format string, args ...any) {
	f.errs = append(f.errs, fmt.Errorf("%s:%d:%d: %s", f.rel(path), line, col, fmt.Sprintf(format, args...)))
}

// kustomization notes the generator inputs a kustomization names and
// returns it with its generators' literals expanded (as it is when none
// has a reference, or it is not YAML: kustomize says what is wrong).
func (f *kustomizeFS) kustomization(path string, data []byte) []byte {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return data
	}
	dir := filepath.Dir(path)
	changed := false
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		field, v := root.Content[i].Value, root.Content[i+1]
		for _, p := range namedFiles(field, v) {
			f.note(dir, p, useOther)
		}
		switch {
		case (field == "configMapGenerator" || field == "secretGenerator") && v.Kind == yaml.SequenceNode:
			for _, gen := range v.Content {
				changed = f.generator(path, gen, field == "secretGenerator", []string{dir}) || changed
			}
		case field == "generators":
			for _, s := range scalars(v) {
				if strings.Contains(s.Value, "\n") {
					changed = f.inlineGenerators(path, dir, s) || changed
				} else if p, ok := f.abs(dir, s.Value); ok && !slices.Contains(f.configs[p], dir) {
					f.configs[p] = append(f.configs[p], dir)
				}
			}
		}
	}
	if !changed {
		return data
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return data
	}
	return out
}

// generator expands the literals of one generator (a configMapGenerator's
// or secretGenerator's entry, or a builtin generator's config) in place and
// notes the files it reads, relative to each kustomization folder in dirs
// that uses it; it reports whether a literal changed.
func (f *kustomizeFS) generator(path string, gen *yaml.Node, secret bool, dirs []string) bool {
	if gen.Kind != yaml.MappingNode {
		return false
	}
	note := func(p string, u use) {
		if secret {
			u = useSecret
		}
		for _, dir := range dirs {
			f.note(dir, p, u)
		}
	}
	changed := false
	for j := 0; j+1 < len(gen.Content); j += 2 {
		v := gen.Content[j+1]
		switch gen.Content[j].Value {
		case "literals":
			for _, lit := range scalars(v) {
				if !f.literalShaped(path, lit, secret) {
					continue
				}
				changed = f.literal(path, lit, secret) || changed
			}
		case "files":
			for _, s := range scalars(v) {
				p := s.Value
				if _, after, ok := strings.Cut(p, "="); ok {
					p = after
				}
				note(p, useConfigMapFile)
			}
		case "envs":
			for _, s := range scalars(v) {
				note(s.Value, useConfigMapEnv)
			}
		case "env":
			if v.Kind == yaml.ScalarNode {
				note(v.Value, useConfigMapEnv)
			}
		}
	}
	return changed
}

// builtinGenerators are the builtin generators whose config a kustomization's
// generators: can name, and whether each makes a Secret.
var builtinGenerators = map[string]bool{"ConfigMapGenerator": false, "SecretGenerator": true}

// generatorConfigs expands the literals of the builtin generators' configs
// among YAML documents (a file in generators:, or what a kustomization
// there builds) and notes their files relative to the kustomization folders
// in dirs that name the file; line is added to the documents' lines, for a
// config written inline. It returns the documents, as they were when no
// literal changed.
func (f *kustomizeFS) generatorConfigs(path string, data []byte, dirs []string, line int) []byte {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	changed := false
	for {
		doc := &yaml.Node{}
		if err := dec.Decode(doc); err != nil {
			if !errors.Is(err, io.EOF) {
				// kustomize says what is wrong.
				return data
			}
			break
		}
		docs = append(docs, doc)
		if len(doc.Content) == 0 {
			continue
		}
		m := doc.Content[0]
		secret, ok := builtinGenerators[mappingValue(m, "kind")]
		if !ok || mappingValue(m, "apiVersion") != "builtin" {
			continue
		}
		shiftLines(m, line)
		changed = f.generator(path, m, secret, dirs) || changed
	}
	if !changed {
		return data
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	for _, doc := range docs {
		if enc.Encode(doc) != nil {
			return data
		}
	}
	if enc.Close() != nil {
		return data
	}
	return buf.Bytes()
}

// inlineGenerators expands the literals of the builtin generators' configs
// written inline in the generators: of the kustomization at path (s holds
// their YAML); it reports whether one changed.
func (f *kustomizeFS) inlineGenerators(path, dir string, s *yaml.Node) bool {
	line := s.Line - 1
	if s.Style == yaml.LiteralStyle || s.Style == yaml.FoldedStyle {
		line = s.Line
	}
	out := f.generatorConfigs(path, []byte(s.Value), []string{dir}, line)
	if string(out) == s.Value {
		return false
	}
	s.Value, s.Tag, s.Style = string(out), "!!str", yaml.LiteralStyle
	return true
}

// mappingValue is the value of a key of a YAML mapping, "" when it has
// none or it is not a scalar.
func mappingValue(m *yaml.Node, key string) string {
	if m.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key && m.Content[i+1].Kind == yaml.ScalarNode {
			return m.Content[i+1].Value
		}
	}
	return ""
}

// shiftLines adds by to the line of n and of every node below it.
func shiftLines(n *yaml.Node, by int) {
	if by == 0 {
		return
	}
	n.Line += by
	for _, c := range n.Content {
		shiftLines(c, by)
	}
}

// scalars returns the scalars of a YAML list.
func scalars(n *yaml.Node) []*yaml.Node {
	if n.Kind != yaml.SequenceNode {
		return nil
	}
	var out []*yaml.Node
	for _, c := range n.Content {
		if c.Kind == yaml.ScalarNode {
			out = append(out, c)
		}
	}
	return out
}

// note records a use of a file the kustomization in dir names, by the
// path kustomize will read it with.
func (f *kustomizeFS) note(dir, p string, u use) {
	if p, ok := f.abs(dir, p); ok {
		f.uses[p] |= u
	}
}

// namedFiles are the files (or folders) a field of a kustomization names
// other than its generators' inputs and configs: its resources, patches,
// components and the like.
func namedFiles(field string, v *yaml.Node) []string {
	var out []string
	switch {
	case slices.Contains(kustomizeDirFields, field) || field != "generators" && slices.Contains(kustomizeListFields, field):
		for _, s := range scalars(v) {
			out = append(out, s.Value)
		}
	case slices.Contains(kustomizePathFields, field) && v.Kind == yaml.SequenceNode:
		for _, e := range v.Content {
			if p := mappingValue(e, "path"); p != "" {
				out = append(out, p)
			}
		}
	case field == "openapi":
		if p := mappingValue(v, "path"); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// abs is the path kustomize reads a file a kustomization in dir names
// with; false for no file (a folder, or one that does not exist).
func (f *kustomizeFS) abs(dir, p string) (string, bool) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, filepath.FromSlash(p))
	}
	d, name, err := f.FileSystem.CleanedAbs(p)
	if err != nil || name == "" {
		return "", false
	}
	return d.Join(name), true
}

// literalShaped checks that a literal is written "key=value", and says
// where when it is not: kustomize's own error would quote every literal of
// the generator, a secretGenerator's too. Key and value are expanded
// apart, so a literal that is one reference holding "k=v" is refused as
// well: its "=" must be written in the file.
func (f *kustomizeFS) literalShaped(path string, n *yaml.Node, secret bool) bool {
	if strings.Contains(n.Value, "=") {
		return true
	}
	what := "configMapGenerator"
	if secret {
		what = "secretGenerator"
	}
	hint := ""
	if HasRef(n.Value) {
		hint = " (key and value are expanded apart: write the key and the \"=\" in the file, as key=${…})"
	}
	if secret {
		f.errorf(path, n.Line, n.Column, "%s: a literal must be key=value; this one has no \"=\" (its text is not shown: it is a secret's)%s", what, hint)
	} else {
		f.errorf(path, n.Line, n.Column, "%s: a literal must be key=value, got %q%s", what, n.Value, hint)
	}
	return false
}

// literal expands one "key=value" literal in place; it reports whether it
// changed. Key and value are expanded apart, so that a value holding "="
// stays the value; a value kustomize would take out of its quotes
// ('"x"') is quoted again unless the literal was written quoted. An error
// about a secretGenerator's literal does not quote it.
func (f *kustomizeFS) literal(path string, n *yaml.Node, secret bool) bool {
	if f.expand == nil || !HasRef(n.Value) {
		return false
	}
	expand := func(s string) (string, bool) {
		out, err := f.expand(s)
		if err != nil {
			msg := err.Error()
			if secret {
				msg = unquotedMessage(err)
			}
			f.errorf(path, n.Line, n.Column, "%s", msg)
			return "", false
		}
		return out, true
	}
	key, val, hasValue := strings.Cut(n.Value, "=")
	k, ok := expand(key)
	if !ok {
		return false
	}
	lit := k
	if hasValue {
		v, ok := expand(val)
		if !ok {
			return false
		}
		if unquoted(val) == val && unquoted(v) != v {
			v = `"` + v + `"`
		}
		lit += "=" + v
	}
	if !secret {
		lit = escapeRefs(lit)
	}
	n.Value, n.Tag, n.Style = lit, "!!str", 0
	return true
}

// unquotedMessage is an expansion error without the text it quotes (the
// source line under a caret): what a Secret is made of is never shown.
func unquotedMessage(err error) string {
	var se *params.SyntaxError
	var ee *params.ExprError
	switch {
	case errors.As(err, &se):
		return se.Msg
	case errors.As(err, &ee):
		return ee.Msg
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}

// unquoted is a literal's value as kustomize takes it: without the quotes
// around it.
func unquoted(s string) string {
	if len(s) >= 2 && s[0] == s[len(s)-1] && (s[0] == '"' || s[0] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// expandLines expands a generator's input file line by line, so that an
// error names its line. An env file's comments are left alone, and its
// values cannot take a line break: it would add a line, another key.
func (f *kustomizeFS) expandLines(path, text string, env bool) (string, bool) {
	lines := strings.Split(text, "\n")
	ok := true
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " \t\r\f\v")
		if !HasRef(line) || env && strings.HasPrefix(trimmed, "#") {
			continue
		}
		col := 1 + strings.IndexAny(line, "$#")
		out, err := f.expand(line)
		if err != nil {
			f.errorf(path, i+1, col, "%v", err)
			ok = false
			continue
		}
		if env && strings.ContainsAny(strings.TrimSuffix(out, "\r"), "\r\n") {
			f.errorf(path, i+1, col, "an env file's value cannot hold a line break (it would add a line); use literals: or files: for it")
			ok = false
			continue
		}
		lines[i] = escapeRefs(out)
	}
	return strings.Join(lines, "\n"), ok
}

// refEscaper writes "${" and "#{" as "$${" and "##{".
var refEscaper = strings.NewReplacer("${", "$${", "#{", "##{")

// escapeRefs escapes the references an expanded value holds: a ConfigMap's
// data is expanded again with the rest of the build, which must give the
// value back, not expand what a parameter's value holds. A Secret's data
// is base64, which that leaves alone.
func escapeRefs(s string) string { return refEscaper.Replace(s) }
