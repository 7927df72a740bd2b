package elaborate

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// MaxNestingDepth bounds how deep stacks may nest (source.stack), so that a
// runaway chain of folders is an error rather than a hang.
const MaxNestingDepth = 32

// MaxSolutionParts bounds the components and nested stacks a solution
// flattens to: a stack that includes another twice, which includes another
// twice, thirty levels down, is a billion leaves from 31 small files.
const MaxSolutionParts = 50_000

// solutionParts is MaxSolutionParts, lowered by tests.
var solutionParts = MaxSolutionParts

// Implicit parameters every leaf of a nesting gets, qualified with its name.
const (
	HSizeParameter      = "hub.hsize"
	ResilienceParameter = "hub.resilience"
)

// nester flattens nested stacks (source.stack) into the leaves of the
// solution (DESIGN 2.7): one component per leaf, named by its path, with
// concrete config substituted and up naming the stack that governs it.
type nester struct {
	diags     *manifest.Diagnostics
	resources map[string]manifest.Resource
	root      string
	// configs are, by leaf, the config of its level, for the
	// ${config.…} of its component manifest.
	configs map[string]*levelConfig
	// params are the nested stacks' parameters, qualified with their leaves.
	params []manifest.Parameter
	files  []string
	// spread is what the leaves' parameters read from config, by
	// name|leaf, for gantry params.
	spread map[string][]*spreadRead
	// resourceParams are the resource parameters added to params.
	resourceParams map[string]bool
	// secretResources are the values of the secret registered resources.
	secretResources []string
	// requires and provides are the nested stacks' own, which hold for the
	// solution as a whole.
	requires, provides []string
	// parts counts the leaves and nested stacks met, up to
	// MaxSolutionParts; tooMany is set once it was passed (and said).
	parts   int
	tooMany bool
	// tooDeep is set once a chain passed MaxNestingDepth (and it was
	// said): other chains that pass it are refused without saying it
	// again.
	tooDeep bool
	// deepAt are, by stackID, the stacks of the chains that passed
	// MaxNestingDepth and the least depth each was met at on one: from
	// there or deeper it passes the bound again, so it is refused without
	// being read (every branch of a runaway chain that nests the next
	// stack twice would be read, up to MaxSolutionParts). Nested stacks
	// off those chains are read and checked as usual.
	deepAt map[string]int
}

// refuseDeep reports whether the nested stack id, at depth (its index on
// the way down) with childPath, nests deeper than MaxNestingDepth, which
// it says the first time only.
func (n *nester) refuseDeep(id string, depth int, stack []frame, childPath string, at manifest.Pos, field string) bool {
	if d, ok := n.deepAt[id]; !ok || depth < d {
		if depth < MaxNestingDepth {
			return false
		}
		if n.deepAt == nil {
			n.deepAt = map[string]int{}
		}
		n.deepAt[id] = depth
		for i, f := range stack {
			if d, ok := n.deepAt[f.file]; !ok || i < d {
				n.deepAt[f.file] = i
			}
		}
	}
	if !n.tooDeep {
		n.tooDeep = true
		n.diags.Errorf(at, field, "%s: stacks nest deeper than %d levels", childPath, MaxNestingDepth)
	}
	return true
}

// count counts a leaf or a nested stack met at pos (field is its path);
// false once the solution has more than MaxSolutionParts, which it says
// once.
func (n *nester) count(pos manifest.Pos, field string) bool {
	if n.tooMany {
		return false
	}
	n.parts++
	if n.parts > solutionParts {
		n.tooMany = true
		n.diags.Errorf(pos, field, "the solution has more than %d components and nested stacks: do nested stacks include others many times over?", solutionParts)
		return false
	}
	return true
}

// frame is one stack on the way down, for cycle messages.
type frame struct {
	file string // the stack's identity, as stackID gives it
	path string // shop, shop.web
}

// stackID is how a stack is known on the way down, for cycles: its folder
// made absolute with its symbolic links resolved, and the file's name as
// written. A stack reached through a folder link (s/self -> .) is the stack
// it is, so including itself is a cycle, not a chain that nests until the
// depth bound. The file itself is not resolved: relative sources resolve
// against the folder it is read from, so one hub.yaml linked into several
// folders, each with its own components, is several stacks. A folder that
// cannot be resolved (it does not exist: said where it is loaded) stays as
// it is named.
func stackID(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return file
	}
	dir := filepath.Dir(abs)
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	return filepath.Join(dir, filepath.Base(abs))
}

// needsNesting reports whether the stack uses nesting at all; stacks that
// do not elaborate exactly as before.
func needsNesting(chain []*level, pc manifest.ParamsConfig) bool {
	if len(pc.Config) > 0 || chain[len(chain)-1].stack.Config != nil {
		return true
	}
	for _, l := range chain {
		for _, c := range l.stack.Components {
			if c.Source.Stack != "" {
				return true
			}
		}
	}
	return false
}

// nest flattens the chain's nested stacks in place: the top stack's config
// comes from the params files' config: sections and its own defaults.
func nest(chain []*level, pc manifest.ParamsConfig, diags *manifest.Diagnostics) *nester {
	own := chain[len(chain)-1].stack
	n := &nester{diags: diags, root: own.Meta.Name, configs: map[string]*levelConfig{}}
	if len(pc.Resources) > 0 {
		n.resources = map[string]manifest.Resource{}
		for _, r := range pc.Resources {
			n.resources[r.Name] = r
			if r.IsSecret() && r.Value != "" {
				n.secretResources = append(n.secretResources, r.Value)
			}
		}
	}
	given := &givenConfig{}
	for _, c := range pc.Config {
		readGiven(c, given, nil, "", n.root+".config", diags)
	}
	cfg := resolveConfig(own, given, n.root, nil, n.resources, diags)
	top := stackID(own.File)
	for _, l := range chain {
		l.stack.Components = n.level(l.stack, cfg, "", n.root, []frame{{file: top, path: n.root}}, &l.stack.Parameters)
		if n.tooMany {
			// What was flattened is a fraction of a solution nobody could
			// run: checking it further would only take the time and
			// memory the bound saves.
			l.stack.Components = nil
			continue
		}
		n.checkLeafNames(l.stack.Components)
		expandLists(l.stack, n.leavesOf(l.stack))
	}
	for i := range own.Parameters {
		p := &own.Parameters[i]
		n.record(p.QName(), n.substitute(p, cfg, "parameters"))
	}
	for _, l := range chain {
		n.substituteOutputs(l.stack.Outputs, cfg, "outputs")
	}
	own.Requires = appendUnique(own.Requires, n.requires...)
	own.Provides = appendUnique(own.Provides, n.provides...)
	return n
}

// checkLeafNames reports two leaves of the solution with one name: a
// component of the top stack named like a leaf of a nested stack
// (web.app beside the nested stack web with its component app).
func (n *nester) checkLeafNames(leaves []manifest.ComponentRef) {
	first := make(map[string]int, len(leaves))
	for i, l := range leaves {
		j, dup := first[l.Name]
		if !dup {
			first[l.Name] = i
			continue
		}
		a, b := leaves[j], l
		if a.Up != "" && b.Up == "" {
			a, b = b, a
		}
		what := "the component " + a.Name
		if a.Up != "" {
			what = "a leaf of nested stack " + a.Up
		}
		n.diags.Errorf(b.Pos, n.root+".components", "component %q: %s has the same name (%s); leaves are named by their path, so rename one", b.Name, what, a.Pos.FileLine())
	}
}

// leafIndex maps, per level, a role name to the leaves it stands for.
type leafIndex map[string][]string

func (n *nester) leavesOf(s *manifest.Stack) leafIndex {
	idx := leafIndex{}
	for _, c := range s.Components {
		role := c.Name
		if c.Up != "" {
			role, _, _ = strings.Cut(c.Name, ".")
		}
		idx[role] = append(idx[role], c.Name)
	}
	return idx
}

// level flattens the components of s, a stack instance whose leaves are
// named prefix+role and whose full path is path. It returns the leaves and
// adds the stack's parameters, qualified for its leaves, to params.
func (n *nester) level(s *manifest.Stack, cfg *levelConfig, prefix, path string, stack []frame, params *[]manifest.Parameter) []manifest.ComponentRef {
	base := filepath.Dir(s.File)
	up := strings.TrimSuffix(prefix, ".")
	var out []manifest.ComponentRef
	roles := leafIndex{}
	for i, ref := range s.Components {
		field := manifest.ItemPath("components", i)
		if strings.Contains(ref.Name, ".") && (prefix != "" || ref.Source.Stack != "") {
			// Leaves are named by their path: a dot of a name's own would
			// make web.a.b the leaf b of a or the leaf a.b of web.
			dot := strings.Index(ref.Name, ".")
			n.diags.Errorf(ref.Positions.At("name", ref.Pos), path+"."+field+".name",
				"name %q has a dot: nested stacks and their components are named without, since leaves are named by their path (%s%s would read as a leaf of a nested stack %s)",
				ref.Name, prefix, ref.Name, prefix+ref.Name[:dot])
			continue
		}
		if !n.count(ref.Pos, path+"."+field) {
			break
		}
		if ref.Source.Stack == "" {
			leaf := ref
			leaf.Name = prefix + ref.Name
			leaf.Up = up
			if prefix != "" && leaf.Source.Dir != "" && !filepath.IsAbs(leaf.Source.Dir) {
				leaf.Source.Dir, _ = filepath.Abs(filepath.Join(base, leaf.Source.Dir))
			}
			n.configs[leaf.Name] = cfg
			n.implicit(leaf.Name, ref.Name, ref.Pos, cfg)
			roles[ref.Name] = []string{leaf.Name}
			out = append(out, leaf)
			continue
		}
		child := n.child(s, ref, field, cfg, prefix, path, stack)
		for _, c := range child {
			roles[ref.Name] = append(roles[ref.Name], c.Name)
		}
		out = append(out, child...)
	}
	// Depends name roles of this level: a leaf, or all the leaves of a
	// nested stack; a nested stack's depends hold for each of its leaves.
	k := 0
	for i, ref := range s.Components {
		var deps []string
		var from map[string]manifest.Written
		for j, d := range ref.Depends {
			leaves, ok := roles[d]
			if !ok {
				if prefix != "" {
					msg := fmt.Sprintf("unknown component %q", d)
					if sug := manifest.Suggest(d, slices.Sorted(maps.Keys(roles))); sug != "" {
						msg += fmt.Sprintf(" (did you mean %q?)", sug)
					}
					n.diags.Errorf(ref.Positions.At(manifest.ItemPath("depends", j), ref.Pos), path+"."+manifest.ItemPath(manifest.ItemPath("components", i)+".depends", j), "%s", msg)
				} else {
					// A name of a base stack (fromStack), merged later,
					// or a mistake check says, with a suggestion — where
					// it is written, once, though a nested stack's
					// depends go to each of its leaves (DependsFrom).
					deps = append(deps, d)
					if ref.Source.Stack != "" {
						if from == nil {
							from = map[string]manifest.Written{}
						}
						from[d] = manifest.Written{Pos: ref.Positions.At(manifest.ItemPath("depends", j), ref.Pos), Field: manifest.ItemPath(manifest.ItemPath("components", i)+".depends", j)}
					}
				}
				continue
			}
			deps = append(deps, leaves...)
		}
		for range roles[ref.Name] {
			if ref.Source.Stack != "" {
				// The leaf's own depends come first: lookup goes through
				// them in order (DESIGN 4.2), so an unqualified ${out}
				// reads the leaf's own sibling before what the nested
				// stack as a whole depends on, wherever it is nested.
				out[k].Depends = append(slices.Clip(out[k].Depends), deps...)
				out[k].DependsRewritten = out[k].DependsRewritten || len(deps) > 0
				if from != nil {
					out[k].DependsFrom = from
				}
			} else {
				out[k].Depends = deps
				out[k].DependsRewritten = out[k].DependsRewritten || !slices.Equal(deps, ref.Depends)
			}
			k++
		}
	}
	if prefix != "" {
		for _, p := range s.Parameters {
			n.localize(&p, s, prefix, path+".parameters."+p.Name)
			read := n.substitute(&p, cfg, path+".parameters")
			targets := roles[p.Component]
			if p.Component == "" {
				targets = nil
				for _, c := range s.Components {
					if c.Source.Stack == "" {
						targets = append(targets, prefix+c.Name)
					}
				}
			} else if len(targets) == 0 {
				n.diags.Warnf(p.Pos, path+".parameters", "parameter %q is qualified for unknown component %q", p.Name, p.Component)
			}
			for _, t := range targets {
				q := p
				q.Component = t
				*params = append(*params, q)
				n.record(q.QName(), read)
			}
		}
	}
	return out
}

// child loads and flattens the nested stack ref names.
func (n *nester) child(s *manifest.Stack, ref manifest.ComponentRef, field string, cfg *levelConfig, prefix, path string, stack []frame) []manifest.ComponentRef {
	at := ref.Source.Pos
	childPath := path + "." + ref.Name
	if ref.Lifecycle != nil {
		// Refused rather than dropped: nothing would apply it.
		n.diags.Errorf(ref.Positions.At("lifecycle", ref.Pos), path+"."+field+".lifecycle",
			"the entry of nested stack %q takes no lifecycle (nothing would apply it): give it in the entries or manifests of its components, or in the top stack's lifecycle, whose lists name leaves (%s.COMPONENT) or whole nested stacks, and whose timeout and retries hold for every leaf",
			ref.Name, childPath[strings.IndexByte(childPath, '.')+1:])
	}
	dir := ref.Source.Stack
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(s.File), dir)
	}
	file := filepath.Join(dir, "hub.yaml")
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		file = dir
	}
	resolved := stackID(file)
	for i, f := range stack {
		if f.file == resolved {
			var paths []string
			for _, g := range stack[i:] {
				paths = append(paths, g.path)
			}
			paths = append(paths, childPath)
			n.diags.Errorf(at, path+"."+field+".source.stack", "nested stack cycle: %s (%s is %s again, which includes itself)", strings.Join(paths, " → "), childPath, f.path)
			return nil
		}
	}
	if n.refuseDeep(resolved, len(stack), stack, childPath, at, path+"."+field+".source.stack") {
		return nil
	}
	if _, err := os.Stat(file); err != nil {
		n.diags.Errorf(at, path+"."+field+".source.stack", "nested stack %q: no hub.yaml in %s", ref.Name, dir)
		return nil
	}
	cs, ds := manifest.LoadStack(file)
	*n.diags = append(*n.diags, ds...)
	if cs == nil {
		return nil
	}
	n.files = append(n.files, file)
	if cs.Meta.FromStack != "" {
		n.diags.Errorf(cs.Meta.Positions.At("fromStack", cs.Meta.Pos), childPath+".meta.fromStack", "a nested stack cannot extend a base stack (fromStack) yet")
	}
	n.checkCarried(cs, childPath)
	n.requires = appendUnique(n.requires, cs.Requires...)
	n.provides = appendUnique(n.provides, cs.Provides...)
	given := &givenConfig{}
	readGiven(ref.Config, given, cfg, s.Meta.Name, childPath+".config", n.diags)
	// Scale detail given to this role by the enclosing level is outer:
	// it beats what the component passes and the stack's defaults.
	for role, rs := range cfg.detail[ref.Name] {
		if given.scale == nil {
			given.scale = map[string]*manifest.RoleScale{}
		}
		given.scale[role] = mergeScale(given.scale[role], rs)
	}
	ccfg := resolveConfig(cs, given, childPath, cfg, n.resources, n.diags)
	return n.level(cs, ccfg, prefix+ref.Name+".", childPath, append(stack, frame{file: resolved, path: childPath}), &n.params)
}

// checkCarried refuses what a nested stack may say that the solution has no
// place for, rather than dropping it: its outputs, its lifecycle (but the
// Hub's usual verbs) and platform. Its requires and provides are carried:
// they hold for the solution.
func (n *nester) checkCarried(cs *manifest.Stack, path string) {
	if len(cs.Outputs) > 0 {
		n.diags.Errorf(cs.Outputs[0].Pos, path+".outputs", "a nested stack's outputs are not carried into the solution: the stack that uses it reads its leaves' outputs (${%s.COMPONENT:OUTPUT})", path[strings.IndexByte(path, '.')+1:])
	}
	if cs.Platform != nil {
		n.diags.Errorf(cs.Platform.Pos, path+".platform", "a nested stack provides nothing to other stacks (platform): only the top stack does")
	}
	l := cs.Lifecycle
	var set []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"bare", l.Bare != ""}, {"order", len(l.Order) > 0}, {"mandatory", len(l.Mandatory) > 0}, {"optional", len(l.Optional) > 0},
		{"requires", len(l.Requires.Optional) > 0}, {"parallel", l.Parallel != 0}, {"readyConditions", len(l.ReadyConditions) > 0},
		{"options", l.Options != nil}, {"teardown_orphans", l.TeardownOrphans != ""}, {"pre_flight", l.PreFlight != nil},
		{"post_flight", l.PostFlight != nil}, {"post_teardown", l.PostTeardown != nil}, {"timeout", l.Timeout != nil}, {"retries", l.Retries != nil},
	} {
		if f.set {
			set = append(set, f.name)
		}
	}
	for _, v := range l.Verbs {
		if v != "deploy" && v != "undeploy" {
			set = append(set, "verbs ("+v+")")
			break
		}
	}
	if len(set) > 0 {
		pos := l.Pos
		if pos.File == "" {
			pos = cs.Pos
		}
		n.diags.Errorf(pos, path+".lifecycle", "a nested stack's lifecycle is not applied (it sets %s): give it in the top stack, whose lists name leaves (%s.COMPONENT) or whole nested stacks, and whose timeout and retries hold for every leaf; a component's own lifecycle goes in its entry or manifest",
			strings.Join(set, ", "), path[strings.IndexByte(path, '.')+1:])
	}
}

// implicit gives a leaf (of role) its instances and resilience as
// parameters, and records the levels they came from.
func (n *nester) implicit(leaf, role string, pos manifest.Pos, cfg *levelConfig) {
	n.params = append(n.params,
		manifest.Parameter{Pos: pos, Origin: pos, Name: HSizeParameter, Component: leaf, Kind: manifest.KindTech, Value: manifest.Scalar(strconv.Itoa(cfg.hsize[role]))},
		manifest.Parameter{Pos: pos, Origin: pos, Name: ResilienceParameter, Component: leaf, Kind: manifest.KindTech, Value: manifest.Scalar(strconv.Itoa(cfg.resilience))},
	)
	for name, field := range map[string]string{HSizeParameter: "config.scale." + role + ".hsize", ResilienceParameter: "config.resilience"} {
		n.record(manifest.QualifiedName(name, leaf), &spreadRead{def: pos.FileLine(), value: []configRef{{name: field, value: cfg.values[field], whole: true}}})
	}
}

// expandLists makes the top stack's lifecycle lists name leaves: a nested
// stack in order, mandatory or optional stands for all its leaves.
func expandLists(s *manifest.Stack, idx leafIndex) {
	expand := func(list []string) []string {
		if list == nil {
			return nil
		}
		var out []string
		for _, name := range list {
			if leaves, ok := idx[name]; ok {
				out = append(out, leaves...)
			} else {
				out = append(out, name)
			}
		}
		return out
	}
	l := &s.Lifecycle
	l.Order, l.Mandatory, l.Optional = expand(l.Order), expand(l.Mandatory), expand(l.Optional)
}
