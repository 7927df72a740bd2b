package elaborate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// assemble merges a chain of stacks (base-most first), loads the component
// manifests and merges the parameters in the assembly order of seed 000.
func assemble(chain []*level, opts Options, diags *manifest.Diagnostics) *Result {
	own := chain[len(chain)-1].stack
	out := &manifest.Stack{Pos: own.Pos, File: own.File, Version: 1, Kind: manifest.KindStack}
	index := map[string]int{}
	var declaredProvides []string
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
		out.Requires = appendUnique(out.Requires, s.Requires...)
		declaredProvides = appendUnique(declaredProvides, s.Provides...)
		mergeLifecycle(&out.Lifecycle, &s.Lifecycle, l == chain[0], out.Components)
		if s.Platform != nil {
			if out.Platform == nil {
				out.Platform = &manifest.Platform{Pos: s.Platform.Pos}
			}
			out.Platform.Provides = appendUnique(out.Platform.Provides, s.Platform.Provides...)
		}
		out.Outputs = mergeOutputs(out.Outputs, s.Outputs)
	}
	for _, l := range chain {
		// The outputs params files declare come after the stacks', as the
		// Hub merges them.
		out.Outputs = mergeOutputs(out.Outputs, l.outputs)
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

	params := newParamSet(diags)
	for i, c := range comps {
		if c == nil {
			continue
		}
		for _, p := range c.Parameters {
			if p.Kind == manifest.KindUser {
				p.Component = out.Components[i].Name
				params.add(p)
			}
		}
	}
	for _, l := range chain {
		for _, p := range l.stack.Parameters {
			params.add(p)
		}
		for _, pf := range l.params {
			for _, p := range pf {
				params.add(p)
			}
		}
	}
	out.Parameters = params.sorted()
	applyEnv(out, opts.Env)

	out.Requires, out.Provides = requiresAndProvides(out, comps, declaredProvides)
	check(out, diags)
	if diags.HasErrors() {
		return nil
	}
	for i, c := range comps {
		if c != nil {
			c.Meta.Name = out.Components[i].Name
		}
	}
	return res
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

// mergeLifecycle merges a stack's lifecycle into the accumulated one of its
// bases: lists are unioned, scalars of the derived stack win, requirement tuning
// follows seed 000, and flight groups append their steps. Positions follow the
// items so that messages point at the file that wrote them.
func mergeLifecycle(dst, src *manifest.StackLifecycle, root bool, comps []manifest.ComponentRef) {
	if dst.Positions == nil {
		dst.Positions = manifest.Positions{}
	}
	if src.Pos.Line != 0 {
		dst.Pos = src.Pos
	}
	for k, p := range src.Positions {
		if !strings.Contains(k, "[") {
			dst.Positions[k] = p
		}
	}
	union := func(field string, dl *[]string, sl []string) {
		for i, v := range sl {
			if containsString(*dl, v) {
				continue
			}
			dst.Positions[manifest.ItemPath(field, len(*dl))] = src.Positions.At(manifest.ItemPath(field, i), src.Pos)
			*dl = append(*dl, v)
		}
	}
	union("verbs", &dst.Verbs, src.Verbs)
	switch {
	case len(src.Order) > 0:
		dst.Order = nil
		union("order", &dst.Order, src.Order)
		// Duplicates are errors of the file, so keep them for check to report.
		for i, v := range src.Order {
			if i >= len(dst.Order) || dst.Order[i] != v {
				dst.Order = append([]string(nil), src.Order...)
				for j := range src.Order {
					dst.Positions[manifest.ItemPath("order", j)] = src.Positions.At(manifest.ItemPath("order", j), src.Pos)
				}
				break
			}
		}
	case len(dst.Order) > 0:
		// A base order extended by the components the derived stack adds.
		for _, c := range comps {
			if !containsString(dst.Order, c.Name) {
				dst.Positions[manifest.ItemPath("order", len(dst.Order))] = c.Pos
				dst.Order = append(dst.Order, c.Name)
			}
		}
	}
	union("mandatory", &dst.Mandatory, src.Mandatory)
	union("optional", &dst.Optional, src.Optional)
	if root {
		union("requires.optional", &dst.Requires.Optional, src.Requires.Optional)
	} else if len(src.Requires.Optional) > 0 {
		dst.Requires.Optional = mergeTuning(dst.Requires.Optional, src.Requires.Optional)
		for i, e := range dst.Requires.Optional {
			for j, se := range src.Requires.Optional {
				if se == e {
					dst.Positions[manifest.ItemPath("requires.optional", i)] = src.Positions.At(manifest.ItemPath("requires.optional", j), src.Pos)
				}
			}
		}
	}
	if src.Parallel > 0 {
		dst.Parallel = src.Parallel
	}
	dst.ReadyConditions = append(dst.ReadyConditions, src.ReadyConditions...)
	if src.TeardownOrphans != "" {
		dst.TeardownOrphans = src.TeardownOrphans
	}
	dst.PreFlight = mergeFlight(dst.PreFlight, src.PreFlight)
	dst.PostFlight = mergeFlight(dst.PostFlight, src.PostFlight)
	dst.PostTeardown = mergeFlight(dst.PostTeardown, src.PostTeardown)
}

func mergeFlight(dst, src *manifest.FlightGroup) *manifest.FlightGroup {
	switch {
	case src == nil:
		return dst
	case dst == nil:
		g := *src
		return &g
	}
	g := *dst
	g.Pos = src.Pos
	g.SkipStandardSteps = g.SkipStandardSteps || src.SkipStandardSteps
	g.Steps = append(append([]manifest.Step(nil), dst.Steps...), src.Steps...)
	return &g
}

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
	var g errgroup.Group
	var panics workerPanics
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, path := range paths {
		g.Go(panics.guard(func() error {
			f := files[path]
			f.docs, f.diags = manifest.ParseFile(path)
			return nil
		}))
	}
	_ = g.Wait()
	panics.rethrow()

	comps := make([]*manifest.Component, len(s.Components))
	perComp := make([]manifest.Diagnostics, len(s.Components))
	for i := range s.Components {
		g.Go(panics.guard(func() error {
			ref := &s.Components[i]
			if ref.Source.Dir == "" || ref.Name == "" {
				return nil
			}
			path := filepath.Clean(filepath.Join(ref.Source.Dir, manifest.ComponentManifestFile))
			f := files[path]
			readErr := len(f.diags) == 1 && f.diags[0].Pos.Line == 0
			if f.diags.HasErrors() && !readErr && f.first != i {
				return nil // a broken file is said once, at its first component
			}
			comps[i] = loadComponent(ref, i, path, f.docs, f.diags, &perComp[i])
			return nil
		}))
	}
	_ = g.Wait()
	panics.rethrow()
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
	switch fi, err := os.Stat(ref.Source.Dir); {
	case err != nil && ref.Source.Git != nil:
		diags.Errorf(ref.Source.Pos, field, "component %q: directory %s not found; it comes from %s: run gantry pull to fetch it", ref.Name, ref.Source.Dir, ref.Source.Git.Remote)
	case err != nil:
		diags.Errorf(ref.Source.Pos, field, "component %q: directory %s not found", ref.Name, ref.Source.Dir)
	case !fi.IsDir():
		diags.Errorf(ref.Source.Pos, field, "component %q: %s is not a directory", ref.Name, ref.Source.Dir)
	default:
		if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
			diags.Errorf(ref.Source.Pos, field, "component %q: no %s in %s", ref.Name, manifest.ComponentManifestFile, ref.Source.Dir)
			break
		}
		diags.Errorf(ref.Source.Pos, field, "component %q: %s: %s", ref.Name, file, ds[0].Msg)
	}
	return nil
}

// requiresAndProvides computes the stack's requirements: those it declares, then
// every component requirement not provided by an earlier component or a base
// stack; and its provides: those declared plus every component's.
func requiresAndProvides(s *manifest.Stack, comps []*manifest.Component, declaredProvides []string) (requires, provides []string) {
	requires = append([]string(nil), s.Requires...)
	provided := map[string]bool{}
	for _, p := range declaredProvides {
		provided[p] = true
	}
	provides = append([]string(nil), declaredProvides...)
	for _, c := range comps {
		if c == nil {
			continue
		}
		for _, r := range c.Requires {
			if !provided[r] {
				requires = appendUnique(requires, r)
			}
		}
		for _, p := range c.Provides {
			provided[p] = true
		}
		provides = appendUnique(provides, c.Provides...)
	}
	return requires, provides
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
	for i, c := range s.Components {
		for j, d := range c.Depends {
			if !known[d] {
				diags.Errorf(c.Positions.At(manifest.ItemPath("depends", j), c.Pos), manifest.ItemPath(manifest.ItemPath("components", i)+".depends", j), "%s", unknown(d))
			}
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
