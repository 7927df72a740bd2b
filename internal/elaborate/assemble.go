package elaborate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/secret"
)

// assemble merges a chain of stacks (base-most first), loads the component
// manifests and merges the parameters in the assembly order of seed 000.
func assemble(chain []*level, opts Options, diags *manifest.Diagnostics) *Result {
	own := chain[len(chain)-1].stack
	out := &manifest.Stack{Pos: own.Pos, File: own.File, Version: 1, Kind: manifest.KindStack}
	index := map[string]int{}
	productDirs := map[string]string{}
	var sourceDirs []string
	for i := len(chain) - 1; i >= 0; i-- {
		sourceDirs = append(sourceDirs, filepath.Dir(chain[i].stack.File))
	}
	for _, l := range chain {
		s := l.stack
		mergeMeta(&out.Meta, &s.Meta)
		base := filepath.Dir(s.File)
		for _, ref := range s.Components {
			ref.Source.Dir = joinDir(base, ref.Source.Dir)
			productDirs[ref.Name] = base
			if i, ok := index[ref.Name]; ok {
				out.Components[i] = ref
				continue
			}
			index[ref.Name] = len(out.Components)
			out.Components = append(out.Components, ref)
		}
		mergeLifecycle(&out.Lifecycle, &s.Lifecycle, l == chain[0], out.Components, diags)
		if s.Platform != nil {
			if out.Platform == nil {
				out.Platform = &manifest.Platform{Pos: s.Platform.Pos}
			}
			out.Platform.Provides = appendUnique(out.Platform.Provides, s.Platform.Provides...)
		}
		// The outputs a stack's params files declare come after the
		// stack's, before those of a derived stack, as the Hub merges them.
		out.Outputs = mergeStackOutputs(out.Outputs, s.Outputs)
		out.Outputs = mergeStackOutputs(out.Outputs, l.outputs)
	}
	out.Meta.FromStack = ""

	comps := loadComponents(out, diags)
	res := &Result{Stack: out, Components: comps, SourceDirs: sourceDirs, ProductDirs: productDirs, TemplateDirs: map[string][]string{}}
	for i, c := range comps {
		if c != nil && c.Template != "" {
			ref := out.Components[i]
			search := append([]string{productDirs[ref.Name]}, sourceDirs...)
			comps[i], res.TemplateDirs[ref.Name] = applyTemplate(c, search, diags)
		}
	}

	if n := chain[len(chain)-1].nest; n != nil {
		n.substituteComponents(out.Components, comps)
		n.checkConcrete(out, out.Components, comps)
	}
	params := newParamSet(out.Components, diags)
	for i, c := range comps {
		if c == nil {
			continue
		}
		for _, p := range c.Parameters {
			// Only user parameters come to the top level (those reading
			// fromEnv or fromFile are user parameters), qualified with the
			// component and without its env, as the Hub CLI brings them.
			userIfFrom(&p)
			if p.Kind == manifest.KindUser {
				p.Component = out.Components[i].Name
				p.Env = ""
				params.add(p)
			}
		}
	}
	for _, l := range chain {
		for _, p := range l.stack.Parameters {
			warnStackEnv(p, diags)
			params.add(p)
		}
		for _, pf := range l.params {
			for _, p := range pf {
				warnStackEnv(p, diags)
				params.add(p)
			}
		}
	}
	out.Parameters = params.sorted()
	applyEnv(out, opts.Env)

	out.Requires, out.Provides = requiresAndProvides(chain, out.Components, comps)
	check(out, diags)
	if diags.HasErrors() {
		if !opts.Partial {
			return nil
		}
		res = withoutBroken(res, *diags)
		comps = res.Components
	}
	markSecretOutputs(out.Outputs)
	for i, c := range comps {
		if c != nil {
			completeComponent(c, out.Components[i].Name)
		}
	}
	return res
}

// withoutBroken leaves out of a result with errors the components whose
// manifests could not be read or have errors, and every mention of them, so
// that what comes after elaborate checks the rest without repeating their
// problems in other words.
func withoutBroken(res *Result, diags manifest.Diagnostics) *Result {
	s := res.Stack
	broken := map[string]bool{}
	for _, d := range diags.Errors() {
		broken[d.Pos.File] = true
	}
	gone, goneFiles := map[string]bool{}, map[string]bool{}
	var refs []manifest.ComponentRef
	var comps []*manifest.Component
	for i, ref := range s.Components {
		var c *manifest.Component
		if i < len(res.Components) {
			c = res.Components[i]
		}
		if c == nil || broken[c.File] {
			gone[ref.Name] = true
			if c != nil {
				goneFiles[c.File] = true
			} else if ref.Source.Dir != "" {
				// Not even decoded (no YAML, another kind): its errors
				// are at the file loadComponents read.
				goneFiles[filepath.Clean(filepath.Join(ref.Source.Dir, manifest.ComponentManifestFile))] = true
			}
			continue
		}
		refs = append(refs, ref)
		comps = append(comps, c)
	}
	if len(gone) == 0 {
		return res
	}
	res.Partial, res.LeftOut = true, gone
	for file := range broken {
		if !goneFiles[file] {
			// Other files have errors too (the stack's own, a
			// template's): what is left may miss anything.
			res.Partial = false
		}
	}
	keep := func(list []string) []string {
		var out []string
		for _, n := range list {
			if !gone[n] {
				out = append(out, n)
			}
		}
		return out
	}
	for i := range refs {
		if kept := keep(refs[i].Depends); len(kept) != len(refs[i].Depends) {
			refs[i].Depends, refs[i].DependsRewritten = kept, true
		}
	}
	s.Components = refs
	s.Lifecycle.Order = keep(s.Lifecycle.Order)
	s.Lifecycle.Mandatory = keep(s.Lifecycle.Mandatory)
	s.Lifecycle.Optional = keep(s.Lifecycle.Optional)
	res.Components = comps
	return res
}

// defaultVerbs are the verbs of a component that lists none.
var defaultVerbs = []string{"deploy", "undeploy"}

// completeComponent fills in a component's manifest as the Hub CLI's
// elaborate does: meta.origin and meta.kind default to the name the
// component's own manifest gives it (its kind: components of the same kind
// do not see each other's outputs), lifecycle.verbs to deploy and undeploy,
// and outputs whose names look secret get kind: secret. Then meta.name
// becomes the stack's name for it.
func completeComponent(c *manifest.Component, name string) {
	if c.Meta.Origin == "" {
		c.Meta.Origin = c.Meta.Name
	}
	if c.Meta.Kind == "" {
		c.Meta.Kind = c.Meta.Name
	}
	c.Meta.Name = name
	if len(c.Lifecycle.Verbs) == 0 {
		c.Lifecycle.Verbs = append([]string(nil), defaultVerbs...)
	}
	if len(c.Outputs) > 0 {
		c.Outputs = append([]manifest.Output(nil), c.Outputs...)
		markSecretOutputs(c.Outputs)
	}
}

// markSecretOutputs gives kind: secret to the outputs without a kind whose
// names look secret by the Hub CLI's rule (secret.HubNamed), as its
// elaborate marks them; an output declared secret: false is left alone.
func markSecretOutputs(outs []manifest.Output) {
	for i := range outs {
		o := &outs[i]
		if o.Kind == "" && secret.HubNamed(o.Name) && (o.Secret == nil || *o.Secret) {
			o.Kind = "secret"
		}
	}
}

func joinDir(base, dir string) string {
	if dir == "" || filepath.IsAbs(dir) {
		return dir
	}
	return filepath.Join(base, dir)
}

func mergeMeta(dst, src *manifest.Meta) {
	dst.Pos = src.Pos
	dst.Name = src.Name
	if src.InstallationHandler != nil {
		dst.InstallationHandler = src.InstallationHandler
	}
	if src.Brief != "" {
		dst.Brief = src.Brief
	}
	if src.Description != "" {
		dst.Description = src.Description
	}
	if src.Version != "" {
		dst.Version = src.Version
	}
	for _, f := range []struct{ dst, src *string }{
		{&dst.Origin, &src.Origin}, {&dst.Kind, &src.Kind}, {&dst.Title, &src.Title},
		{&dst.Maturity, &src.Maturity}, {&dst.License, &src.License}, {&dst.Icon, &src.Icon},
	} {
		if *f.src != "" {
			*f.dst = *f.src
		}
	}
	if src.Source != nil {
		dst.Source = src.Source
	}
	for k, v := range src.Annotations {
		if dst.Annotations == nil {
			dst.Annotations = map[string]any{}
		}
		dst.Annotations[k] = v
	}
}

// mergeStackOutputs merges a stack's outputs (or a params file's) into those
// of its base, as the Hub CLI does: an output of a name the base has
// replaces it in place field by field (what it sets wins, the rest is the
// base's), the others are appended.
func mergeStackOutputs(dst, src []manifest.Output) []manifest.Output {
	dst = append([]manifest.Output(nil), dst...)
	for _, o := range src {
		i := 0
		for i < len(dst) && dst[i].Name != o.Name {
			i++
		}
		if i == len(dst) {
			dst = append(dst, o)
			continue
		}
		cur := &dst[i]
		cur.Pos = o.Pos
		for _, f := range []struct{ dst, src *string }{
			{&cur.Value, &o.Value}, {&cur.FromTfVar, &o.FromTfVar}, {&cur.Kind, &o.Kind},
			{&cur.Brief, &o.Brief}, {&cur.Description, &o.Description},
		} {
			if *f.src != "" {
				*f.dst = *f.src
			}
		}
		if o.FromObject != nil {
			cur.FromObject = o.FromObject
		}
		if o.Secret != nil {
			cur.Secret = o.Secret
		}
	}
	return dst
}

// mergeOutputs merges outputs by name: a later one replaces an earlier one
// whole (a template's outputs under a component's).
func mergeOutputs(dst, src []manifest.Output) []manifest.Output {
	for _, o := range src {
		replaced := false
		for i := range dst {
			if dst[i].Name == o.Name {
				dst[i], replaced = o, true
				break
			}
		}
		if !replaced {
			dst = append(dst, o)
		}
	}
	return dst
}

// loadComponents reads the manifest of every component, reporting missing
// directories and manifests at the stack entry that names them. Manifests are
// parsed in parallel; diagnostics keep the order of the components.
func loadComponents(s *manifest.Stack, diags *manifest.Diagnostics) []*manifest.Component {
	// Each manifest file is parsed once, however many components use its
	// folder; each component decodes its own copy.
	type parsed struct {
		docs  []*manifest.Node
		diags manifest.Diagnostics
		first int // the component that reports the file's parse errors
	}
	files := map[string]*parsed{}
	var paths []string
	for i := range s.Components {
		ref := &s.Components[i]
		if ref.Source.Dir == "" || ref.Name == "" {
			continue
		}
		path := filepath.Clean(filepath.Join(ref.Source.Dir, manifest.ComponentManifestFile))
		if _, ok := files[path]; !ok {
			files[path] = &parsed{first: i}
			paths = append(paths, path)
		}
	}
	forEach(len(paths), func(i int) {
		f := files[paths[i]]
		f.docs, f.diags = manifest.ParseFile(paths[i])
	})

	comps := make([]*manifest.Component, len(s.Components))
	perComp := make([]manifest.Diagnostics, len(s.Components))
	forEach(len(s.Components), func(i int) {
		ref := &s.Components[i]
		if ref.Source.Dir == "" || ref.Name == "" {
			return
		}
		path := filepath.Clean(filepath.Join(ref.Source.Dir, manifest.ComponentManifestFile))
		f := files[path]
		readErr := len(f.diags) == 1 && f.diags[0].Pos.Line == 0
		if f.diags.HasErrors() && !readErr && f.first != i {
			return // a broken file is said once, at its first component
		}
		comps[i] = loadComponent(ref, ref.Item, path, f.docs, f.diags, &perComp[i])
	})
	// Components that share a folder decode its manifest each: a problem
	// of the file is said once, at the first of them.
	said := map[string]bool{}
	for _, ds := range perComp {
		for _, d := range ds {
			if k := d.String(); !said[k] {
				said[k] = true
				*diags = append(*diags, d)
			}
		}
	}
	return comps
}

func loadComponent(ref *manifest.ComponentRef, i int, file string, docs []*manifest.Node, parseDiags manifest.Diagnostics, diags *manifest.Diagnostics) *manifest.Component {
	field := manifest.ItemPath("components", i) + ".source.dir"
	var c *manifest.Component
	ds := append(manifest.Diagnostics(nil), parseDiags...)
	if !parseDiags.HasErrors() {
		c, ds = manifest.DecodeComponentFile(file, docs, ds)
	}
	if c != nil || len(ds) != 1 || ds[0].Pos.Line != 0 {
		*diags = append(*diags, ds...)
		return c
	}
	// The manifest could not be read (or holds nothing): say why at the
	// stack entry — a missing folder, a missing file, or what is wrong
	// with the file that is there (empty, a directory, unreadable).
	at := ref.Positions.At("source.dir", ref.Source.Pos)
	switch fi, err := os.Stat(ref.Source.Dir); {
	case errors.Is(err, fs.ErrNotExist) && ref.Source.Git != nil && ref.Source.Git.Remote != "":
		diags.Errorf(at, field, "component %q: directory %s not found; it comes from %s: run gantry pull to fetch it", ref.Name, ref.Source.Dir, ref.Source.Git.Remote)
	case errors.Is(err, fs.ErrNotExist):
		diags.Errorf(at, field, "component %q: directory %s not found", ref.Name, ref.Source.Dir)
	case err != nil:
		// A loop of links, a folder that cannot be searched: say what.
		diags.Errorf(at, field, "component %q: directory %s cannot be read: %s", ref.Name, ref.Source.Dir, pathErrorReason(err))
	case !fi.IsDir():
		diags.Errorf(at, field, "component %q: %s is not a directory", ref.Name, ref.Source.Dir)
	default:
		if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
			diags.Errorf(at, field, "component %q: no %s in %s", ref.Name, manifest.ComponentManifestFile, ref.Source.Dir)
			break
		}
		diags.Errorf(at, field, "component %q: %s: %s", ref.Name, file, ds[0].Msg)
	}
	return nil
}

// requiresAndProvides computes the stack's requires and provides as the Hub
// CLI does, stack by stack of the fromStack chain, base-most first. At each
// stack, its components are those it declares that no derived stack
// declares again. Its provides are its base's, those it declares and those
// of its components and of its base's, sorted. Its requires are its base's
// requires, then, sorted, what it declares that its base does not provide
// and what its components require (walking its own lifecycle.order, or its
// components when it has none) that neither its base nor an earlier
// component of its provides. A base providing kubernetes provides kubectl,
// and so does a component.
func requiresAndProvides(chain []*level, refs []manifest.ComponentRef, comps []*manifest.Component) (requires, provides []string) {
	byName := map[string]*manifest.Component{}
	for i, c := range comps {
		if c != nil {
			byName[refs[i].Name] = c
		}
	}
	last := map[string]int{} // the last stack of the chain declaring a component
	for k, l := range chain {
		for _, ref := range l.stack.Components {
			last[ref.Name] = k
		}
	}
	for k, l := range chain {
		s := l.stack
		provided := map[string]bool{}
		provide := func(p string) {
			provided[p] = true
			if p == "kubernetes" {
				provided["kubectl"] = true
			}
		}
		for _, p := range provides {
			provide(p)
		}
		unmet := map[string]bool{}
		need := func(r string) {
			if !provided[r] {
				unmet[r] = true
			}
		}
		for _, r := range s.Requires {
			need(r)
		}
		order := s.Lifecycle.Order
		if len(order) == 0 {
			for _, ref := range s.Components {
				order = append(order, ref.Name)
			}
		}
		for _, name := range order {
			c := byName[name]
			if c == nil || last[name] > k {
				continue
			}
			for _, r := range c.Requires {
				need(r)
			}
			for _, p := range c.Provides {
				provide(p)
			}
		}
		requires = appendUnique(requires, sortedKeys(unmet)...)
		all := map[string]bool{}
		for _, p := range provides {
			all[p] = true
		}
		for _, p := range s.Provides {
			all[p] = true
		}
		for name, c := range byName {
			if last[name] <= k {
				for _, p := range c.Provides {
					all[p] = true
				}
			}
		}
		provides = sortedKeys(all)
	}
	return requires, provides
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// check validates what only the merged stack can tell: references between
// components, the order, optional and mandatory lists.
func check(s *manifest.Stack, diags *manifest.Diagnostics) {
	names := make([]string, len(s.Components))
	known := map[string]bool{}
	for i, c := range s.Components {
		names[i] = c.Name
		known[c.Name] = true
	}
	unknown := func(name string) string {
		msg := fmt.Sprintf("unknown component %q", name)
		if sg := manifest.Suggest(name, names); sg != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", sg)
		}
		return msg
	}
	said := map[manifest.Written]bool{}
	for _, c := range s.Components {
		for j, d := range c.Depends {
			if known[d] {
				continue
			}
			if w, ok := c.DependsFrom[d]; ok {
				// A nested stack's entry's, given to each of its leaves.
				if !said[w] {
					said[w] = true
					diags.Errorf(w.Pos, w.Field, "%s", unknown(d))
				}
				continue
			}
			diags.Errorf(c.Positions.At(manifest.ItemPath("depends", j), c.Pos), manifest.ItemPath(manifest.ItemPath("components", c.Item)+".depends", j), "%s", unknown(d))
		}
	}
	l := &s.Lifecycle
	if len(l.Order) > 0 {
		inOrder := map[string]bool{}
		for i, n := range l.Order {
			switch {
			case !known[n]:
				diags.Errorf(l.Positions.At(manifest.ItemPath("order", i), l.Pos), manifest.ItemPath("lifecycle.order", i), "%s", unknown(n))
			case inOrder[n]:
				diags.Errorf(l.Positions.At(manifest.ItemPath("order", i), l.Pos), manifest.ItemPath("lifecycle.order", i), "component %q is listed twice", n)
			}
			inOrder[n] = true
		}
		var missing []string
		for _, n := range names {
			if !inOrder[n] {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			diags.Errorf(l.Positions.At("order", l.Pos), "lifecycle.order", "must list exactly the components; missing %s", strings.Join(missing, ", "))
		}
	}
	mandatory := map[string]bool{}
	for i, n := range l.Mandatory {
		if !known[n] {
			diags.Errorf(l.Positions.At(manifest.ItemPath("mandatory", i), l.Pos), manifest.ItemPath("lifecycle.mandatory", i), "%s", unknown(n))
		}
		mandatory[n] = true
	}
	for i, n := range l.Optional {
		switch {
		case !known[n]:
			diags.Errorf(l.Positions.At(manifest.ItemPath("optional", i), l.Pos), manifest.ItemPath("lifecycle.optional", i), "%s", unknown(n))
		case mandatory[n]:
			diags.Errorf(l.Positions.At(manifest.ItemPath("optional", i), l.Pos), manifest.ItemPath("lifecycle.optional", i), "component %q is both mandatory and optional", n)
		}
	}
	for i, e := range l.Requires.Optional {
		if _, comp, ok := strings.Cut(e, ":"); ok && comp != "" && !known[comp] {
			diags.Errorf(l.Positions.At(manifest.ItemPath("requires.optional", i), l.Pos), manifest.ItemPath("lifecycle.requires.optional", i), "%s", unknown(comp))
		}
	}
	for _, p := range s.Parameters {
		if p.Component != "" && !known[p.Component] {
			diags.Warnf(p.Pos, "", "parameter %q is qualified for %s", p.Name, unknown(p.Component))
		}
	}
	for i, o := range s.Outputs {
		if comp, _, ok := strings.Cut(o.Name, ":"); ok && !known[comp] {
			// The Hub CLI leaves such an output without a value: stacks
			// derived from a bigger one often keep its list of outputs.
			diags.Warnf(o.Pos, manifest.ItemPath("outputs", i)+".name", "%s: the output will have no value", unknown(comp))
		}
	}
}

// applyEnv sets the value of every parameter whose fromEnv is a key of env.
func applyEnv(s *manifest.Stack, env map[string]string) {
	for i := range s.Parameters {
		p := &s.Parameters[i]
		if v, ok := env[p.FromEnv]; ok && p.FromEnv != "" {
			p.Value = manifest.Scalar(v)
		}
	}
}

// warnStackEnv says that env: on a stack or params-file parameter sets
// nothing, as the Hub CLI warns: only a component's parameters set its
// processes' environment.
func warnStackEnv(p manifest.Parameter, diags *manifest.Diagnostics) {
	if p.Env != "" {
		diags.Warnf(p.Pos, "", "parameter %q specifies env: %s on the stack or a params file, where it sets nothing: give env to the component's parameter", p.QName(), p.Env)
	}
}
