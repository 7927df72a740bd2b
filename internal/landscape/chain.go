package landscape

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// notDeployedYet stands, in the imports a plan evaluates a deployment
// manifest with, for the exports of a component not deployed yet: spiff
// cannot evaluate it, so whatever depends on those exports stays
// unresolved instead of taking a value it will not have.
const notDeployedYet = "__gantry_import_not_deployed_yet"

// inputs are what a component's deployment.yaml and export.yaml are
// evaluated with besides the files of its template chain (sow's genstubs):
// the imports, the env node and component.deployment, as JSON.
type inputs struct {
	imports, env, compdeploy []byte
	// missing are the imports whose exports are not there (a plan's
	// evaluation only; a run's fails on them).
	missing []string
}

// gather reads a component's inputs. For a plan, imports not deployed yet
// stand as notDeployedYet; for a run they are an error, as in sow.
func (l *Landscape) gather(c *Component, forPlan bool) (*inputs, error) {
	in := &inputs{}
	imports := map[string]any{}
	for _, im := range c.Imports {
		p := filepath.Join(l.ExportDir(im.Component), exportFile)
		data, err := l.view.readFile(p)
		if errors.Is(err, os.ErrNotExist) && forPlan {
			imports[im.Label] = "(( &temporary(" + notDeployedYet + ") ))"
			in.missing = append(in.missing, im.Component)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("imported component %s not deployed yet (%s: %v)", im.Component, p, err)
		}
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("read the exports of %s (%s): %w", im.Component, p, err)
		}
		imports[im.Label] = v
	}
	var err error
	if in.imports, err = json.MarshalIndent(map[string]any{"imports": imports}, "", "  "); err != nil {
		return nil, err
	}
	if in.env, err = json.MarshalIndent(map[string]any{"env": l.envNode(c)}, "", "  "); err != nil {
		return nil, err
	}
	var meta map[string]any
	_ = json.Unmarshal(c.Meta, &meta)
	if d, ok := meta["deployment"]; ok && d != nil {
		if in.compdeploy, err = json.MarshalIndent(d, "", "  "); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// versions are the product's spec version ("" without SPEC-VERSION) and
// the one the component was deployed with (0 before its first deploy), as
// its state folder says now.
func (l *Landscape) versions(c *Component) (spec string, deployed int, err error) {
	spec = c.Product.SpecVersion
	p := filepath.Join(l.StateDir(c.Name), specVersion)
	data, err := l.view.readFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return spec, 0, nil
	}
	if err != nil {
		return spec, 0, fmt.Errorf("%s: %w", p, err)
	}
	v := strings.TrimSpace(string(data))
	if deployed, err = strconv.Atoi(v); err != nil {
		return spec, 0, fmt.Errorf("%s: deployed specification version %q is no number", p, v)
	}
	return spec, deployed, nil
}

// isDeployed is sow's test: the state folder records a deploy, finished or
// not (sow's version checks count a failed one too).
func (l *Landscape) isDeployed(c *Component) bool {
	return l.view.isFile(filepath.Join(l.StateDir(c.Name), stateInfo))
}

// envNode is the env node of seed 002 (sow's component stub): the
// component's folders, product, templates and versions, and the lookup
// functions along its template chain.
func (l *Landscape) envNode(c *Component) map[string]any {
	dirs := append([]string{c.Dir}, reversed(c.TemplateDirs())...)
	quoted := make([]string, len(dirs))
	for i, d := range dirs {
		q, _ := json.Marshal(d)
		quoted[i] = string(q)
	}
	list := "[" + strings.Join(quoted, ", ") + "]"
	env := map[string]any{
		"<<": "(( &temporary &inject ))", "ROOTDIR": l.Root, "ROOTPRODUCTDIR": l.RootProductDir(),
		"PRODUCT": c.Product.Name, "PRODUCTDIR": c.Product.Dir, "COMPONENT": c.Name,
		"GENDIR": l.GenDir(c.Name), "STATEDIR": l.StateDir(c.Name), "EXPORTDIR": l.ExportDir(c.Name),
		// The component first, then its templates from the nearest to the
		// base one (seed 002): a file of a template is overridden by the
		// component or a template using it.
		"lookupfile": "(( |f|->lookup_file(f, " + list + ")[0] ))",
		"lookupdir":  "(( |f|->lookup_dir(f, " + list + ")[0] ))",
		"TEMPLATES":  c.TemplateDirs(),
	}
	spec, deployed, _ := l.versions(c)
	if spec != "" {
		v, _ := strconv.Atoi(spec)
		migrate := l.isDeployed(c) && v != deployed
		env["SPECVERSION"], env["DEPLOYEDVERSION"], env["MIGRATE"], env["MIGRATION"] = v, deployed, migrate, migrate
	} else {
		// Without a SPEC-VERSION sow says to migrate always.
		env["SPECVERSION"], env["DEPLOYEDVERSION"], env["MIGRATE"], env["MIGRATION"] = nil, deployed, true, true
	}
	return env
}

func reversed(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[len(l)-1-i] = s
	}
	return out
}

// genStubs are the stubs of the deployment and of the exports after the
// chain's own files, in sow's order: the component's (and its templates')
// stubs, the configuration, the imports, the env node and the component's
// deployment node. They are named as the files sow writes them to.
func (l *Landscape) genStubs(c *Component, in *inputs) ([]Doc, error) {
	var out []Doc
	for _, s := range c.Stubs {
		data, err := readFile(s)
		if err != nil {
			return nil, fmt.Errorf("stub %s: %w", s, err)
		}
		out = append(out, Doc{Name: s, Data: data})
	}
	gen := l.GenDir(c.Name)
	out = append(out, Doc{Name: l.ConfigFile(), Data: l.Config},
		Doc{Name: filepath.Join(gen, "import.json"), Data: in.imports},
		Doc{Name: filepath.Join(gen, "env.json"), Data: in.env})
	if in.compdeploy != nil {
		out = append(out, Doc{Name: filepath.Join(gen, "compdeploy.json"), Data: in.compdeploy})
	}
	return out, nil
}

// chainJob is the evaluation of a control file along the component's
// template chain: the base template's version is the template, the
// nearer ones and the component's are stubs in front of the others. ok is
// false when no version of the file exists.
func chainJob(c *Component, file string, stubs []Doc) (Job, bool, error) {
	files := c.chainFiles(file)
	if len(files) == 0 {
		return Job{Template: Doc{Name: filepath.Join(c.Dir, file), Data: []byte("{}")}, Stubs: stubs}, false, nil
	}
	docs := make([]Doc, len(files))
	for i, f := range files {
		data, err := readFile(f)
		if err != nil {
			return Job{}, false, fmt.Errorf("read %s: %w", f, err)
		}
		docs[i] = Doc{Name: f, Data: data}
	}
	// sow's order: the template nearest the base first, the component's
	// last. spiff prepares each stub with those after it as its stubs, so
	// the component's values reach every version before the base
	// template looks them up.
	return Job{Template: docs[0], Stubs: append(append([]Doc(nil), docs[1:]...), stubs...)}, true, nil
}

// deploymentJob is the evaluation of a component's deployment manifest:
// the chain's deployment.yaml with the stubs and the last state.
func (l *Landscape) deploymentJob(c *Component, stubs []Doc) (Job, error) {
	job, _, err := chainJob(c, deploymentFile, stubs)
	if err != nil {
		return Job{}, err
	}
	job.WantState = true
	stateFile := filepath.Join(l.StateDir(c.Name), "state.yaml")
	if data, err := l.view.readFile(stateFile); err == nil {
		job.State = &Doc{Name: stateFile, Data: data}
	} else if !errors.Is(err, os.ErrNotExist) {
		return Job{}, fmt.Errorf("read the last state: %w", err)
	}
	return job, nil
}
