package landscape

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gantry-dev/gantry/internal/atomicfile"
	"github.com/gantry-dev/gantry/internal/manifest"
)

// planned is a component's plugin lists as the plan runs them: every entry
// of its deployment manifest is a step of the plan. The manifest is
// evaluated when the landscape is opened, with the exports its imports
// have then; the run evaluates it again with the exports they have by
// then and checks that it still has this shape (sow.deployment), so
// nothing runs that the plan did not show.
type planned struct {
	// Setup is component.plugins, List the manifest's plugins.
	Setup, List []*shape
	// Unknown says why the list cannot be planned (nil when it can): it
	// depends on the exports of imports not deployed yet. Pos is where
	// the list is.
	Unknown error
	Pos     manifest.Pos
	// Vanished are the instances sow's records (plugins.json) say exist
	// that the list may no longer have: each gets a step that deletes it
	// if the run's list does not have it.
	Vanished []string
	// Actions says the component has an action script (its own or the
	// crop's lib/action), whose deploy and delete functions are steps.
	Actions bool
}

// planComponents works out the plugin lists of the active components: the
// deployment manifests evaluated as far as they can be before the run, in
// one child process. Problems in them are errors now; a list that depends
// on exports not there yet cannot be planned (an error for a deploy).
func (l *Landscape) planComponents(ctx context.Context, pos *positions, diags *manifest.Diagnostics) {
	var comps []*Component
	var jobs []Job
	var ins []*inputs
	for _, c := range l.Components {
		if !c.Active || c.broken {
			continue
		}
		c.Plan = &planned{Actions: l.hasActions(c)}
		setup, err := shapeOf(c.Setup)
		if err != nil {
			diags.Errorf(pos.at(c.File, []string{"component", "plugins"}), "component.plugins", "%v", err)
			continue
		}
		c.Plan.Setup = setup
		in, err := l.gather(c, true)
		if err != nil {
			diags.Errorf(pos.at(c.File, nil), "", "component %s: %v", c.Name, err)
			continue
		}
		stubs, err := l.genStubs(c, in)
		if err == nil {
			var job Job
			if job, err = l.deploymentJob(c, stubs); err == nil {
				job.Partial, job.WantState = true, false
				comps, jobs, ins = append(comps, c), append(jobs, job), append(ins, in)
				continue
			}
		}
		diags.Errorf(pos.at(c.File, nil), "", "component %s: %v", c.Name, err)
	}
	// The exports are evaluated only after the plugins ran, but a file
	// spiff cannot even read is a mistake to report now, not after them.
	checked := map[string]bool{}
	for _, c := range comps {
		for _, f := range c.chainFiles(exportFile) {
			if checked[f] {
				continue
			}
			checked[f] = true
			if job, ok := parseOnly(f, diags); ok {
				jobs = append(jobs, job)
			}
		}
	}
	if len(jobs) == 0 {
		return
	}
	results, err := Evaluate(ctx, jobs)
	if err != nil {
		diags.Errorf(manifest.Pos{File: l.Root}, "", "evaluate the components' deployment manifests: %v", err)
		return
	}
	for i, c := range comps {
		l.readPlan(c, jobs[i], ins[i], &results[i], pos, diags)
	}
	for _, res := range results[len(comps):] {
		*diags = append(*diags, pos.diagnostics(res.Issues, "export.yaml")...)
	}
}

// readPlan takes the plugin list's shape from a partial evaluation.
func (l *Landscape) readPlan(c *Component, job Job, in *inputs, res *Result, pos *positions, diags *manifest.Diagnostics) {
	// Issues that only wait for exports not there yet are expected, and
	// so are those that only wait for a command or a write the plan does
	// not do; any other is a mistake in the files, found now rather than
	// during the run. Without missing exports every issue is one but
	// those.
	var errs, waiting []Issue
	var refused [][]string
	for _, is := range res.Issues {
		switch {
		case osRefused(is.Msg):
			// A command or a write the plan does not do stays for the
			// run, which does it (partial).
			refused = append(refused, is.Path)
		case len(in.missing) == 0 && !is.Cause:
			waiting = append(waiting, is)
		case len(in.missing) == 0 || is.Cause && !strings.Contains(is.Msg, notDeployedYet):
			errs = append(errs, is)
		}
	}
	osRefusals := len(refused) > 0
	errs = append(errs, waitingOnOthers(waiting, refused)...)
	if len(errs) > 0 {
		*diags = append(*diags, pos.diagnostics(errs, "deployment.yaml")...)
		return
	}
	var doc map[string]any
	if len(res.JSON) > 0 {
		if err := json.Unmarshal(res.JSON, &doc); err != nil {
			diags.Errorf(pos.at(job.Template.Name, nil), "", "deployment.yaml: expected a mapping: %v", err)
			return
		}
	}
	listPos := l.listPos(c, pos)
	list, err := shapeOf(doc["plugins"])
	switch {
	case errors.Is(err, errUnresolved) && len(in.missing) == 0 && osRefusals:
		c.Plan.Unknown = fmt.Errorf("its plugin list (%v) comes from a command or a file it writes (exec, pipe, write), which runs only with the component: gantry plans every plugin of a landscape before it runs; write the list in deployment.yaml", err)
		c.Plan.Pos = listPos
		return
	case errors.Is(err, errUnresolved):
		c.Plan.Unknown = fmt.Errorf("its plugin list (%v) depends on the exports of %s, not deployed yet: gantry plans every plugin of a landscape before it runs; deploy %s first (gantry deploy -c %s)",
			err, strings.Join(in.missing, ", "), strings.Join(in.missing, ", "), strings.Join(in.missing, ","))
		if l.Handler != nil && !l.handlerLater && !l.handlerCalled {
			// plan, validate and --dry-run read the records as they are
			// here (docs/sow.md, "Where gantry differs from sow").
			c.Plan.Unknown = fmt.Errorf("%w; or, if the installation handler keeps the records elsewhere, its prepare may bring them: deploy and undeploy call it first and plan again, plan, validate and --dry-run do not call it", c.Plan.Unknown)
		}
		c.Plan.Pos = listPos
		return
	case err != nil:
		diags.Errorf(listPos, "plugins", "deployment.yaml: plugins: %v", err)
		return
	}
	c.Plan.List = list
	keys := map[string]bool{}
	keysOf(list, keys)
	for _, k := range loadRegistry(l.view, l.StateDir(c.Name)).recorded() {
		if err := checkKey(k); err != nil {
			diags.Errorf(manifest.Pos{File: filepath.Join(l.StateDir(c.Name), "plugins.json")}, "last", "%v", err)
			continue
		}
		if !keys[k] {
			c.Plan.Vanished = append(c.Plan.Vanished, k)
		}
	}
}

// unresolvedRef is how spiff says a node waits for another: the reference
// it could not evaluate yet.
var unresolvedRef = regexp.MustCompile(`'([^']+)' unresolved`)

// waitingOnOthers are the issues of nodes that wait for another node
// (waiting) that do not wait, directly or through others, for a node
// whose command or write the plan does not do (refused, by path): a
// value computed from exec's output is known at run time; a node waiting
// for nothing that will ever be evaluated (a cycle) is a mistake.
func waitingOnOthers(waiting []Issue, refused [][]string) []Issue {
	pending := append([][]string(nil), refused...)
	left := waiting
	for changed := len(pending) > 0; changed; {
		changed = false
		var still []Issue
		for _, is := range left {
			if waitsOn(is, pending) {
				pending = append(pending, is.Path)
				changed = true
			} else {
				still = append(still, is)
			}
		}
		left = still
	}
	return left
}

// waitsOn reports whether an issue's message names a reference that can
// be a pending node, in or below it or above it: spiff looks a reference
// up in the scopes around the node, the innermost first (a leading dot:
// at the root only).
func waitsOn(is Issue, pending [][]string) bool {
	for _, m := range unresolvedRef.FindAllStringSubmatch(is.Msg, -1) {
		ref := m[1]
		var candidates [][]string
		if strings.HasPrefix(ref, ".") {
			candidates = append(candidates, strings.Split(ref[1:], "."))
		} else {
			comps := strings.Split(ref, ".")
			for k := len(is.Path) - 1; k >= 0; k-- {
				candidates = append(candidates, append(append([]string(nil), is.Path[:k]...), comps...))
			}
		}
		for _, c := range candidates {
			for _, p := range pending {
				if isPrefix(c, p) || isPrefix(p, c) {
					return true
				}
			}
		}
	}
	return false
}

func isPrefix(prefix, path []string) bool {
	if len(prefix) > len(path) {
		return false
	}
	for i := range prefix {
		if prefix[i] != path[i] {
			return false
		}
	}
	return true
}

// listPos is where a component's plugin list is written: the nearest
// version of deployment.yaml that has a plugins node.
func (l *Landscape) listPos(c *Component, pos *positions) manifest.Pos {
	files := c.chainFiles(deploymentFile)
	for i := len(files) - 1; i >= 0; i-- {
		if p, ok := pos.find(files[i], []string{"plugins"}); ok {
			return p
		}
	}
	if len(files) > 0 {
		return pos.at(files[len(files)-1], nil)
	}
	return manifest.Pos{File: c.File, Line: 1, Col: 1}
}

// hasActions reports whether a component has an action script: the
// crop's lib/action (executable, as sow wants it) or its own action.
func (l *Landscape) hasActions(c *Component) bool {
	return len(l.actionScripts(c)) > 0
}

// actionScripts are the action scripts sourced for a component, in sow's
// order.
func (l *Landscape) actionScripts(c *Component) []string {
	var out []string
	if p := filepath.Join(l.RootProductDir(), "lib", "action"); isFile(p) {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o111 != 0 {
			out = append(out, p)
		}
	}
	if p := filepath.Join(c.Dir, "action"); c.Gone == "" && isFile(p) {
		out = append(out, p)
	}
	return out
}

// registry is sow's plugins.json in the component's state folder: the
// external instances of the last deploy (last), those of the run going on
// (current), and the spec each was deployed with.
type registry struct {
	Current []string       `json:"current,omitempty"`
	Last    []string       `json:"last,omitempty"`
	Plugins map[string]any `json:"plugins"`
}

// recorded are the instances the records say exist: the last deploy's,
// then those a run that did not finish deployed (latest first), then any
// other whose spec is kept. sow looks at the last deploy's only, so an
// instance deployed by a run that failed or was killed later on was never
// deleted once it left the list.
func (r *registry) recorded() []string {
	seen := map[string]bool{}
	var out []string
	add := func(keys ...string) {
		for _, k := range keys {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	add(r.Last...)
	add(r.Current...)
	add(sortedKeys(r.Plugins)...)
	return out
}

// loadRegistry reads the plugins.json in dir as v has it (nil: as it is).
func loadRegistry(v *recordView, dir string) *registry {
	r := &registry{}
	if data, err := v.readFile(filepath.Join(dir, "plugins.json")); err == nil {
		_ = json.Unmarshal(data, r)
	}
	if r.Plugins == nil {
		r.Plugins = map[string]any{}
	}
	return r
}

// save replaces plugins.json whole: a crash leaves the old records or the
// new ones, never a torn file that would forget instances to delete.
func (r *registry) save(dir string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, "plugins.json"), data, 0o600, true)
}
