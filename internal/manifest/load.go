package manifest

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gantry-dev/gantry/internal/objpath"
)

// Manifest kinds.
const (
	KindStack      = "stack"
	KindComponent  = "component"
	KindParameters = "parameters"
	KindTemplate   = "template"
)

var (
	componentNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	paramNameRE     = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_./-]*$`)
)

// LoadStack reads a stack manifest (one document of kind: stack).
func LoadStack(path string) (*Stack, Diagnostics) {
	docs, diags := ParseFile(path)
	if diags.HasErrors() {
		return nil, diags
	}
	return DecodeStackFile(path, docs, diags)
}

// DecodeStackFile decodes the parsed documents of a stack manifest
// (ParseFile of path); diags are the parser's, added to.
func DecodeStackFile(path string, docs []*Node, diags Diagnostics) (*Stack, Diagnostics) {
	if len(docs) == 0 {
		diags.Errorf(Pos{File: path}, "", "the file is empty; expected a manifest of kind: stack")
		return nil, diags
	}
	if len(docs) > 1 {
		diags.Errorf(docs[1].Pos, "", "a stack manifest has one document, this file has %d (elaborated files are read by deploy, plan and params, not as a base stack)", len(docs))
		return nil, diags
	}
	s := DecodeStack(docs[0], &diags)
	if s != nil {
		s.File = path
	}
	return s, diags
}

// DecodeStack decodes and checks one stack document.
func DecodeStack(doc *Node, diags *Diagnostics) *Stack {
	if !checkHeader(doc, KindStack, diags) {
		return nil
	}
	s := &Stack{}
	from := len(*diags)
	d := decoder{diags: diags}
	d.decode(doc, reflectOf(s), "")
	for i := range s.Components {
		s.Components[i].Item = i
	}
	s.Parameters = flattenAll(s.Parameters, "parameters", diags)
	validateStack(s, diags)
	pointAtValues(doc, "", (*diags)[from:])
	return s
}

// DecodeComponentFile decodes the parsed documents of a component manifest
// (ParseFile of path); diags are the parser's, added to. A stack made of
// many components from one folder parses its manifest once and decodes it
// for each.
func DecodeComponentFile(path string, docs []*Node, diags Diagnostics) (*Component, Diagnostics) {
	if len(docs) != 1 {
		if len(docs) == 0 {
			diags.Errorf(Pos{File: path}, "", "the file is empty; expected a manifest of kind: component")
		} else {
			diags.Errorf(docs[1].Pos, "", "a component manifest has one document, this file has %d", len(docs))
		}
		return nil, diags
	}
	c := DecodeComponent(docs[0], &diags)
	if c != nil {
		c.File = path
		c.Dir = filepath.Dir(path)
	}
	return c, diags
}

// LoadTemplate reads a template (blueprint) manifest: template.yaml, of kind
// template, with the fields of a component manifest.
func LoadTemplate(path string) (*Component, Diagnostics) {
	docs, diags := ParseFile(path)
	if diags.HasErrors() {
		return nil, diags
	}
	if len(docs) != 1 {
		diags.Errorf(Pos{File: path}, "", "a template manifest has one document, this file has %d", len(docs))
		return nil, diags
	}
	if !checkHeader(docs[0], KindTemplate, &diags) {
		return nil, diags
	}
	c := &Component{}
	from := len(diags)
	d := decoder{diags: &diags}
	d.decode(docs[0], reflectOf(c), "")
	c.Parameters = flattenAll(c.Parameters, "parameters", &diags)
	validateComponent(c, &diags)
	pointAtValues(docs[0], "", diags[from:])
	c.File, c.Dir = path, filepath.Dir(path)
	return c, diags
}

// DecodeComponent decodes and checks one component document.
func DecodeComponent(doc *Node, diags *Diagnostics) *Component {
	if !checkHeader(doc, KindComponent, diags) {
		return nil
	}
	c := &Component{}
	from := len(*diags)
	d := decoder{diags: diags}
	d.decode(doc, reflectOf(c), "")
	c.Parameters = flattenAll(c.Parameters, "parameters", diags)
	validateComponent(c, diags)
	pointAtValues(doc, "", (*diags)[from:])
	return c
}

// LoadParams reads a params file: documents of kind: parameters, mappings with a
// parameters: list (and the Hub's outputs: list of stack outputs), or plain
// lists of parameters. The parameters of all its documents are returned in
// order, flattened, and its outputs.
func LoadParams(path string) ([]Parameter, []Output, Diagnostics) {
	docs, diags := ParseFile(path)
	if diags.HasErrors() {
		return nil, nil, diags
	}
	ps, outs := DecodeParams(docs, &diags)
	return ps, outs, diags
}

// DecodeParams decodes the documents of a params file: its parameters and
// its stack outputs.
func DecodeParams(docs []*Node, diagsp *Diagnostics) ([]Parameter, []Output) {
	diags := *diagsp
	defer func() { *diagsp = diags }()
	var out []Parameter
	var outputs []Output
	d := decoder{diags: &diags}
	for i, doc := range docs {
		field, inDoc := "parameters", ""
		if len(docs) > 1 {
			inDoc = fmt.Sprintf("document %d: ", i+1)
			field = inDoc + "parameters"
		}
		from := len(diags)
		var ps []Parameter
		switch doc.Kind {
		case SeqNode:
			d.decode(doc, reflectOf(&ps), field)
		case MapNode:
			if k := doc.Get("kind"); k != nil && !(k.Kind == ScalarNode && k.Value == KindParameters) {
				diags.Errorf(k.Pos, "kind", "expected %q in a params file, got %s", KindParameters, k.Describe())
				continue
			}
			var f struct {
				Version    int         `yaml:"version"`
				Kind       string      `yaml:"kind"`
				Parameters []Parameter `yaml:"parameters"`
				Outputs    []Output    `yaml:"outputs"`
				// Read by DecodeParamsConfig.
				Config    *Node `yaml:"-" accept:"config"`
				Resources *Node `yaml:"-" accept:"resources"`
			}
			d.decode(doc, reflectOf(&f), "")
			ps = f.Parameters
			validateOutputs(f.Outputs, false, &diags)
			outputs = append(outputs, f.Outputs...)
		default:
			d.expect(doc, "", "a params document (a mapping with parameters: or a list of parameters)")
			continue
		}
		out = append(out, flattenAll(ps, field, &diags)...)
		if doc.Kind == SeqNode {
			pointAtValues(doc, field, diags[from:])
		} else {
			// The decoder's paths start at the document's keys, those of
			// its parameters' checks at the document's name.
			pointAtValues(doc, "", diags[from:])
			if inDoc != "" {
				pointAtValues(doc, inDoc, diags[from:])
			}
		}
	}
	return out, outputs
}

// checkHeader verifies the version and kind of a document before it is decoded,
// so that a params file given where a stack belongs gets one clear message.
func checkHeader(doc *Node, kind string, diags *Diagnostics) bool {
	if doc.Kind != MapNode {
		diags.Errorf(doc.Pos, "", "expected a manifest of kind: %s (a mapping), got %s", kind, doc.Describe())
		return false
	}
	k := doc.Get("kind")
	switch {
	case k == nil:
		diags.Errorf(doc.Pos, "kind", "missing required field \"kind\" (expected %q)", kind)
		return false
	case k.Kind != ScalarNode || k.Value != kind:
		diags.Errorf(k.Pos, "kind", "expected %q, got %s", kind, k.Describe())
		return false
	}
	v := doc.Get("version")
	switch {
	case v == nil:
		diags.Errorf(doc.Pos, "version", "missing required field \"version\" (expected 1)")
	case v.Kind != ScalarNode || v.Type != IntScalar || v.Value != "1":
		diags.Errorf(v.Pos, "version", "expected 1, got %s", v.Describe())
	}
	return true
}

// flattenAll flattens nested parameters to dotted names: children take the
// parent's name as prefix and inherit its kind, empty, component and secret.
func flattenAll(ps []Parameter, path string, diags *Diagnostics) []Parameter {
	// Most parameters have no children: room for each saves copying the
	// list over and over as it grows (700,000 parameters are 300 MB).
	out := make([]Parameter, 0, len(ps))
	for i := range ps {
		flatten(ps[i], "", Parameter{}, itemPath(path, i), &out, diags)
	}
	return out
}

func flatten(p Parameter, prefix string, parent Parameter, path string, out *[]Parameter, diags *Diagnostics) {
	if p.Name == "" {
		// The decoder already reported the missing name.
		return
	}
	if !paramNameRE.MatchString(p.Name) {
		diags.Errorf(p.Pos, path+".name", "invalid parameter name %q (letters, digits and _ . - / only; qualify with component:, not |)", p.Name)
	}
	if prefix != "" {
		p.Name = prefix + "." + p.Name
	}
	if p.Kind == "" {
		p.Kind = parent.Kind
	}
	if p.Empty == "" {
		p.Empty = parent.Empty
	}
	if p.Component == "" {
		p.Component = parent.Component
	}
	if p.Secret == nil {
		p.Secret = parent.Secret
	}
	validateParameter(&p, path, diags)
	if len(p.Parameters) > 0 {
		for _, f := range []struct {
			name string
			set  bool
		}{{"value", p.Value != ""}, {"default", p.Default != ""}, {"fromEnv", p.FromEnv != ""}, {"fromFile", p.FromFile != ""}, {"env", p.Env != ""}} {
			if f.set {
				diags.Errorf(p.Pos, path+"."+f.name, "a parameter with nested parameters is only a prefix; move %s to a nested parameter", f.name)
			}
		}
		children := p.Parameters
		p.Parameters = nil
		for i := range children {
			flatten(children[i], p.Name, p, itemPath(path+".parameters", i), out, diags)
		}
		return
	}
	p.Origin = p.Pos
	*out = append(*out, p)
}

func validateParameter(p *Parameter, path string, diags *Diagnostics) {
	switch p.Kind {
	case "", KindUser, KindTech, KindLink:
	default:
		diags.Errorf(p.Pos, path+".kind", "expected %s, got %q", quoteList([]string{KindUser, KindTech, KindLink}), p.Kind)
	}
	if p.Empty != "" && p.Empty != EmptyAllow {
		diags.Errorf(p.Pos, path+".empty", "expected %q, got %q", EmptyAllow, p.Empty)
	}
	if p.Env != "" && !envNameRE.MatchString(p.Env) {
		// "PATH=/x" would set another variable; a NUL would cut the list.
		diags.Errorf(p.Pos, path+".env", "invalid environment variable name %q (letters, digits and _, not starting with a digit)", p.Env)
	}
	if p.Component != "" && !componentNameRE.MatchString(p.Component) {
		diags.Errorf(p.Pos, path+".component", "invalid component name %q", p.Component)
	}
}

// valueTwice warns of a parameter given a value twice in one list (the same
// name and component; a copy left behind, most often): nothing said so, and
// which one is used follows the merge (elaborate's mergeParameter), field by
// field: the last value, else the last fromEnv when its variable is set,
// else the last fromFile. The warning, at each later entry, says which.
func valueTwice(list []Parameter, diags *Diagnostics) {
	type sources struct{ first, value, fromEnv, fromFile *Parameter }
	seen := map[string]*sources{}
	for i := range list {
		p := &list[i]
		if len(p.Parameters) != 0 || p.Value == "" && p.FromEnv == "" && p.FromFile == "" {
			continue
		}
		s := seen[p.QName()]
		if s == nil {
			s = &sources{first: p}
			seen[p.QName()] = s
		}
		if p.Value != "" {
			s.value = p
		}
		if p.FromEnv != "" {
			s.fromEnv = p
		}
		if p.FromFile != "" {
			s.fromFile = p
		}
		if s.first == p {
			continue
		}
		diags.Warnf(p.Pos, itemPath("parameters", i), "parameter %q is given a value twice in this list (first at line %d): %s", p.QName(), s.first.Pos.Line, usedOfTwice(p, s.value, s.fromEnv, s.fromFile))
	}
}

// usedOfTwice says which entry's value a parameter given twice gets, at
// entry p, from the last entries giving a value, a fromEnv, a fromFile.
func usedOfTwice(p, value, fromEnv, fromFile *Parameter) string {
	at := func(q *Parameter) string {
		if q == p {
			return "this one's"
		}
		return fmt.Sprintf("line %d's", q.Pos.Line)
	}
	switch {
	case value != nil && value == p:
		return "this one's value is used"
	case value != nil:
		return fmt.Sprintf("%s value is used (a value wins over fromEnv and fromFile)", at(value))
	case fromEnv != nil && fromFile != nil:
		return fmt.Sprintf("%s fromEnv is read, then %s fromFile when %s is unset or empty", at(fromEnv), at(fromFile), fromEnv.FromEnv)
	case fromEnv != nil:
		return fmt.Sprintf("%s fromEnv is used", at(fromEnv))
	default:
		return fmt.Sprintf("%s fromFile is used", at(fromFile))
	}
}

func validateStack(s *Stack, diags *Diagnostics) {
	valueTwice(s.Parameters, diags)
	seen := map[string]int{}
	for i := range s.Components {
		c := &s.Components[i]
		path := itemPath("components", i)
		validateComponentName(c.Name, c.Pos, path+".name", diags)
		if j, dup := seen[c.Name]; dup && c.Name != "" {
			diags.Errorf(c.Pos, path+".name", "duplicate component %q (first at components[%d], %s)", c.Name, j, s.Components[j].Pos.FileLine())
		} else {
			seen[c.Name] = i
		}
		if c.Source.Git != nil {
			validateGit(c.Source.Git, path+".source.git", diags)
		}
		switch {
		case c.Source.Stack != "" && (c.Source.Dir != "" || c.Source.Git != nil):
			diags.Errorf(c.Source.Pos, path+".source", "a nested stack takes neither dir nor git: give stack alone")
		case c.Source.Stack != "":
		case c.Source.Dir == "" && c.Source.Git != nil:
			c.Source.Dir, c.Source.FromGit = c.Source.Git.Folder(c.Name), true
		case c.Source.Dir == "" && c.Source.Pos.Line != 0:
			// (source: null is not decoded, its Pos zero: the decoder said it.)
			diags.Errorf(c.Source.Pos, path+".source", "expected dir (a folder) or git (a repository gantry pull fetches), got neither")
		}
		for j, dep := range c.Depends {
			if dep == c.Name {
				diags.Errorf(c.Positions.At(itemPath("depends", j), c.Pos), itemPath(path+".depends", j), "component %q depends on itself", dep)
			}
		}
		if c.Lifecycle != nil {
			validateComponentLifecycle(c.Lifecycle, path+".lifecycle", diags)
		}
	}
	l := &s.Lifecycle
	switch l.TeardownOrphans {
	case "", "before", "after", "none":
	default:
		diags.Errorf(l.Positions.At("teardown_orphans", l.Pos), "lifecycle.teardown_orphans", "expected \"before\", \"after\" or \"none\", got %q", l.TeardownOrphans)
	}
	if _, given := l.Positions["parallel"]; (l.Parallel < 0 || given && l.Parallel == 0 || l.Parallel > MaxParallel) && !diags.hasError("lifecycle.parallel") {
		diags.Errorf(l.Positions.At("parallel", l.Pos), "lifecycle.parallel", "expected a number of components to run at once from 1 to %d, got %d", MaxParallel, l.Parallel)
	}
	if l.Bare != "" && l.Bare != EmptyAllow {
		// The Hub CLI only warns (its schema lists allow alone), and a
		// stack's bare has no effect on a kind: stack.
		diags.Warnf(l.Positions.At("bare", l.Pos), "lifecycle.bare", "expected %q, got %q (the only value the Hub CLI recognizes is allow)", EmptyAllow, l.Bare)
	}
	validateVerbs(l.Verbs, l.Positions.At("verbs", l.Pos), "lifecycle.verbs", diags)
	validateReadyConditions(l.ReadyConditions, "lifecycle.readyConditions", diags)
	validateOutputs(s.Outputs, false, diags)
}

// envNameRE is a name a process environment can carry as a variable.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// maxNameLen bounds names that become file names (a component's log, its
// state folder): file systems refuse names past 255 bytes.
const maxNameLen = 128

// reservedNames are the names of the plan's stack-level groups: the
// flights, the run's set-up and finalize (stack), the wait for a killed
// run's processes (leftovers), the installation handler's calls.
var reservedNames = map[string]bool{"pre-flight": true, "post-flight": true, "post-teardown": true,
	"stack": true, "leftovers": true, "installation-handler": true}

// ReservedComponentName reports whether a component of a stack cannot be
// called name: a group of the plan is, and the component's logs, times and
// status would merge with the group's. Only the names a stack gives its
// components are held to it (a component manifest's own meta.name is its
// kind, renamed by the stack; a nested stack's leaves are named by path).
func ReservedComponentName(name string) bool { return reservedNames[name] }

// ReservedNameMessage says why a component cannot be called name.
func ReservedNameMessage(name string) string {
	return fmt.Sprintf("component name %q is the plan's own group of that name (its logs, times and status would merge with the component's): give the component another name", name)
}

func validateComponentName(name string, pos Pos, field string, diags *Diagnostics) {
	switch {
	case name == "":
	case len(name) > maxNameLen:
		diags.Errorf(pos, field, "a component name of %d characters; at most %d (it names files and folders)", len(name), maxNameLen)
	case !componentNameRE.MatchString(name):
		diags.Errorf(pos, field, "invalid component name %q (letters, digits and _ . - only)", name)
	}
}

func validateComponent(c *Component, diags *Diagnostics) {
	validateComponentName(c.Meta.Name, c.Meta.Pos, "meta.name", diags)
	if t := c.Templates; t != nil {
		validateTemplateTarget(t.Pos, t.Kind, t.Files, t.Directories, "templates", diags)
		for i, e := range t.Extra {
			validateTemplateTarget(e.Pos, e.Kind, e.Files, e.Directories, itemPath("templates.extra", i), diags)
		}
	}
	validateComponentLifecycle(&c.Lifecycle, "lifecycle", diags)
	validateOutputs(c.Outputs, true, diags)
	seen := map[string]string{}
	checkPluginKeys(c.Plugins, "plugins", seen, diags)
	checkPluginKeys(c.SetupPlugins, "setupPlugins", seen, diags)
}

func validateComponentLifecycle(l *ComponentLifecycle, path string, diags *Diagnostics) {
	if o := l.Options; o != nil && o.Random != nil && (o.Random.Bytes < 0 || o.Random.Bytes > MaxPadBytes) {
		diags.Errorf(o.Random.Pos, path+".options.random.bytes", "expected a size of the one-time pad HUB_RANDOM of at most %d bytes (0: the default, 128), got %d", MaxPadBytes, o.Random.Bytes)
	}
	if l.Bare != "" && l.Bare != EmptyAllow {
		diags.Errorf(l.Pos, path+".bare", "expected %q, got %q", EmptyAllow, l.Bare)
	}
	validateReadyConditions(l.ReadyConditions, path+".readyConditions", diags)
	validateVerbs(l.Verbs, l.Pos, path+".verbs", diags)
	for name, sd := range map[string]*ServiceDiscoveryPoint{"service_discovery_attach": l.ServiceDiscoveryAttach, "service_discovery_detach": l.ServiceDiscoveryDetach} {
		if sd == nil {
			continue
		}
		for i, st := range sd.Steps {
			if st.Type != StepCall && st.Type != "" {
				diags.Errorf(st.Pos, itemPath(path+"."+name+".steps", i), "service discovery injection points take only call steps, got %s", st.Type)
			}
		}
	}
}

func validateReadyConditions(rcs []ReadyCondition, path string, diags *Diagnostics) {
	for i, rc := range rcs {
		p := itemPath(path, i)
		// A pauseSeconds that did not decode (0.1) is said where it is.
		if rc.URL == "" && rc.DNS == "" && rc.PauseSeconds == 0 && !diags.HasFieldError(p+".pauseSeconds") {
			diags.Errorf(rc.Pos, p, "a ready condition needs url, dns or pauseSeconds")
		}
		if rc.WaitSeconds < 0 || rc.PauseSeconds < 0 {
			diags.Errorf(rc.Pos, p, "waitSeconds and pauseSeconds cannot be negative")
		}
		// The run waits a time.Duration: past ≈292 years it wraps round.
		if float64(rc.WaitSeconds) > MaxSeconds || float64(rc.PauseSeconds) > MaxSeconds {
			diags.Errorf(rc.Pos, p, "waitSeconds and pauseSeconds are at most %d", int64(MaxSeconds))
		}
	}
}

// gitRefRE is a ref gantry pull passes to git: a branch or a tag name, never
// something git could take for an option.
var gitRefRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_./+@-]*$`)

// validateGit checks a component's Git source: what gantry pull hands to
// git and the folders it writes must be what they look like.
func validateGit(g *GitRepo, path string, diags *Diagnostics) {
	if strings.HasPrefix(g.Remote, "-") || strings.ContainsAny(g.Remote, " \t\n") {
		diags.Errorf(g.Pos, path+".remote", "expected a repository URL or path, got %q", g.Remote)
	}
	if g.Ref != "" && (!gitRefRE.MatchString(g.Ref) || strings.Contains(g.Ref, "..")) {
		diags.Errorf(g.Pos, path+".ref", "expected a branch or tag name, got %q", g.Ref)
	}
	for _, f := range []struct{ field, dir, inside string }{
		{"subDir", g.SubDir, "the repository"},
		{"localDir", g.LocalDir, "the stack's folder"},
	} {
		if f.dir != "" && !filepath.IsLocal(filepath.FromSlash(f.dir)) {
			diags.Errorf(g.Pos, path+"."+f.field, "expected a folder inside %s (relative, not climbing out with ..), got %q", f.inside, f.dir)
		}
	}
}

// MaxPadBytes bounds lifecycle.options.random.bytes: the base64 of the
// one-time pad HUB_RANDOM must fit in one environment variable (Linux takes
// 128 KiB per string).
const MaxPadBytes = 64 << 10

// verbRE is a custom verb: it names a make target and a script (verb.sh).
var verbRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// validateVerbs checks custom verbs: names a make target, a script and a
// command-line argument can carry.
func validateVerbs(verbs []string, pos Pos, field string, diags *Diagnostics) {
	for i, v := range verbs {
		if !verbRE.MatchString(v) || len(v) > maxNameLen {
			diags.Errorf(pos, itemPath(field, i), "invalid verb %q (letters, digits and _ . - only)", v)
		}
	}
}

// tfVarEncodings are the encodings fromTfVar may apply (as ${name/enc}).
var tfVarEncodings = map[string]bool{"base64": true, "unbase64": true, "json": true, "yaml": true}

// outputKinds are the kinds an output may declare: plain, or secret with an
// optional type (secret/password); anything else is a typo that would show
// a secret in clear.
func validOutputKind(kind string) bool {
	return kind == "" || kind == "secret" || strings.HasPrefix(kind, "secret/") && len(kind) > len("secret/")
}

// validateOutputs checks the outputs of a stack or, with component, of a
// component: only components deploy objects to read outputs from.
func validateOutputs(outs []Output, component bool, diags *Diagnostics) {
	seen := map[string]int{}
	for i, o := range outs {
		p := itemPath("outputs", i)
		if !validOutputKind(o.Kind) {
			diags.Errorf(o.Pos, p+".kind", "unknown output kind %q: expected secret (or secret/<type>), or no kind", o.Kind)
		}
		if o.FromTfVar != "" {
			if _, enc, ok := strings.Cut(o.FromTfVar, "/"); ok {
				for _, e := range strings.Split(enc, "/") {
					if !tfVarEncodings[e] {
						diags.Errorf(o.Pos, p+".fromTfVar", "unknown encoding %q in %q: expected base64, unbase64, json or yaml", e, o.FromTfVar)
					}
				}
			}
		}
		if o.Secret != nil && !*o.Secret && o.kindSecret() {
			diags.Errorf(o.Pos, p+".secret", "output %q is kind: %s and secret: false; drop one of them", o.Name, o.Kind)
		}
		if j, dup := seen[o.Name]; dup && o.Name != "" {
			diags.Errorf(o.Pos, p+".name", "duplicate output %q (first at outputs[%d])", o.Name, j)
		}
		seen[o.Name] = i
		if o.Value != "" && o.FromTfVar != "" {
			diags.Errorf(o.Pos, p, "an output takes value or fromTfVar, not both")
		}
		if o.FromObject != nil {
			validateObjectRef(o, component, p+".fromObject", diags)
		}
	}
}

// validateObjectRef checks an output's fromObject: only a component's, alone,
// with a path kubectl's JSONPath reads; a Secret's
// values are never declared non-secret.
func validateObjectRef(o Output, component bool, p string, diags *Diagnostics) {
	r := o.FromObject
	if !component {
		diags.Errorf(r.Pos, p, "a stack output cannot read an object: declare fromObject on the component that deploys it, and read that component's output")
		return
	}
	if o.Value != "" || o.FromTfVar != "" {
		diags.Errorf(o.Pos, p, "an output takes one of value, fromTfVar and fromObject")
	}
	// Whether the value is secret is decided by the kind as written, and
	// the path is checked as written: neither may come from a parameter.
	if strings.Contains(r.Kind, "${") || strings.Contains(r.Kind, "#{") {
		diags.Errorf(r.Pos, p+".kind", "the kind cannot hold ${...} or #{...}: write it out (Service, Secret, deployment.apps)")
	}
	// An empty kind, name or path is the decoder's error already.
	if strings.Contains(r.Path, "${") || strings.Contains(r.Path, "#{") {
		diags.Errorf(r.Pos, p+".path", "the path cannot hold ${...} or #{...}: write it out")
	} else if _, err := objpath.Parse(r.Path); err != nil && r.Path != "" {
		diags.Errorf(r.Pos, p+".path", "%v", err)
	}
	if o.Secret != nil && !*o.Secret && r.ReadsSecret() {
		diags.Errorf(o.Pos, p, "output %q reads a Secret and says secret: false: a Secret's values stay secret", o.Name)
	}
}

// ItemPath names the i-th item of a list field in diagnostics: path[i].
func ItemPath(path string, i int) string { return itemPath(path, i) }
