package landscape

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// orphan is a component the landscape no longer has (its folder is gone)
// as sow's records of it say it was: a delete of it runs from them, as an
// undeploy of any component the stack no longer lists runs from the state.
// Its product and templates are those env.json recorded; its component.yaml
// is the one its setup plugins ran with (gen/<comp>/component.json); its
// plugins are deleted with the manifest it was deployed with
// (gen/<comp>/deployment.json) and looked up where the component's were,
// but for its own folder. It works in its GENDIR (also CURRENT): the
// folder it had is gone. The paths env.json recorded below the landscape's
// folder of then are taken below its folder now: the landscape may have been
// moved or copied since.
func (l *Landscape) orphan(name string) (*Component, error) {
	if !filepath.IsLocal(name) {
		return nil, fmt.Errorf("component %s: not a component's name (it leads out of the landscape's folders)", name)
	}
	c := &Component{Name: name, Active: true, Meta: []byte(`{"component":{}}`)}
	gen := l.GenDir(name)
	c.Dir = gen
	var env struct {
		Env struct {
			RootDir    string   `json:"ROOTDIR"`
			Product    string   `json:"PRODUCT"`
			ProductDir string   `json:"PRODUCTDIR"`
			Templates  []string `json:"TEMPLATES"`
		} `json:"env"`
	}
	// sow writes env.json as a YAML fragment ("env": {...} without the
	// braces around it), gantry as JSON: YAML reads both.
	p := filepath.Join(gen, "env.json")
	if data, err := readFile(p); err == nil {
		if err := yaml.Unmarshal(data, &env); err != nil {
			return nil, fmt.Errorf("component %s: %s: %w", name, p, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	env.Env.ProductDir = l.rebase(env.Env.RootDir, env.Env.ProductDir)
	for i, t := range env.Env.Templates {
		env.Env.Templates[i] = l.rebase(env.Env.RootDir, t)
	}
	for _, pr := range l.Products {
		if pr.Dir == env.Env.ProductDir || env.Env.ProductDir == "" && pr.Name == mainProduct {
			c.Product = pr
		}
	}
	if c.Product == nil {
		// Its greenhouse is gone too: plugins are looked up in the
		// landscape and the tool root.
		c.Product = &Product{Name: env.Env.Product}
	}
	c.Gone = filepath.Join(c.Product.Dir, componentsDir, filepath.FromSlash(name))
	if c.Product.Dir == "" {
		c.Gone = filepath.Join(env.Env.ProductDir, componentsDir, filepath.FromSlash(name))
	}
	c.recordedTemplates = env.Env.Templates
	if data, err := readFile(filepath.Join(gen, "component.json")); err == nil {
		c.Meta = data
	}
	c.Deployed = l.isDeployed(c)
	return c, nil
}

// rebase is p, a path recorded when the landscape's folder was then, below
// the landscape's folder now; a path outside then stays as it is.
func (l *Landscape) rebase(then, p string) string {
	if then == "" || p == "" {
		return p
	}
	if r, err := filepath.Rel(then, p); err == nil && (r == "." || filepath.IsLocal(r)) {
		return filepath.Join(l.Root, r)
	}
	return p
}

// missingRecord is the error of a delete of a component whose folder is
// gone when a record it needs is missing too.
func (w *work) missingRecord(what, file string) error {
	return fmt.Errorf("component %s is no longer in the landscape (its folder %s is gone) and %s, %s, is missing: it cannot be deleted without it; restore the component's folder and run the undeploy again, or, when what it deployed is gone already, remove %s, %s and %s (sow's records of it) and run the undeploy again: it then has nothing to delete",
		w.c.Name, w.rel(w.c.Gone), w.rel(file), what, w.rel(w.export_()), w.rel(w.state()), w.rel(w.gen()))
}

// rel is a path relative to the landscape's root, for messages.
func (w *work) rel(p string) string { return relTo(w.l.Root, p) }

// relTo is p relative to root when it lies below it, else p.
func relTo(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && filepath.IsLocal(r) {
		return r
	}
	return p
}
