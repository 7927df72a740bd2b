package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plugin"
)

func init() { plugin.Register("kubernetes", engine{manifests{}}, plugin.ForLists) }

// manifests is the kubernetes plugin's source: an entry's manifest files
// and folders, CRDs folder and kustomization, or a folder holding a
// kustomization.
type manifests struct{}

// plan reads the manifests as written.
func (manifests) plan(req plugin.StagesRequest) (*planned, error) {
	cfg, err := parseConfig(req.Entry.Config)
	if err != nil {
		return nil, err
	}
	l := newLoader(req.Dir, nil)
	objs, err := l.load(cfg)
	if req.Read != nil {
		for _, p := range l.outside {
			req.Read(p)
		}
	}
	if err == nil {
		// The strings are expanded when the component runs: their
		// mistakes are found now, before anything runs.
		err = checkRefs(req.Dir, cfg, req.Unknown)
	}
	p := &planned{objs: objs, upgrade: Upgrading(req.Recorded)}
	if !HasRef(cfg.Namespace) {
		p.namespace = cfg.Namespace
		if err == nil && cfg.Namespace != "" {
			err = placedTwice(objs, cfg.Namespace)
		}
	}
	return p, err
}

// placedTwice finds the objects written twice, once without a namespace
// and once in the release namespace (releaseNS, a literal of the config):
// one object once placed, which prepare would refuse (place).
func placedTwice(objs []*object, releaseNS string) error {
	type key struct{ group, kind, name string }
	bare := map[key]*object{}
	for _, o := range objs {
		if o.u.GetNamespace() == "" {
			gvk := o.u.GroupVersionKind()
			bare[key{gvk.Group, gvk.Kind, o.u.GetName()}] = o
		}
	}
	var errs []error
	for _, o := range objs {
		gvk := o.u.GroupVersionKind()
		if first, ok := bare[key{gvk.Group, gvk.Kind, o.u.GetName()}]; ok && first != o && o.u.GetNamespace() == releaseNS {
			errs = append(errs, fmt.Errorf("%s: %s is the object of %s too (in namespace %s, the release namespace)", o.source, o.ref(), first.source, releaseNS))
		}
	}
	return errors.Join(errs...)
}

// open reads the manifests with the parameters expanded and connects to
// the cluster of the config, else of the component's parameters, else of
// the environment.
func (manifests) open(ctx context.Context, c *plugin.Call) (*opened, error) {
	cfg, err := parseConfig(c.Entry.Config)
	if err != nil {
		return nil, err
	}
	objs, err := load(c.Dir, cfg, c.Expand)
	if err != nil {
		if c.Action != plugin.ActionDelete {
			return nil, err
		}
		fmt.Fprintf(c.Stdout, "warning: cannot read the manifests, so no delete hooks run: %v\n", err)
		objs = nil
	}
	var params map[string]string
	if c.Instance != nil {
		params = c.Instance.Params
	}
	cl, err := connect(ctx, targetOf(cfg, params, c.Env), c.Dir)
	if err != nil {
		return nil, err
	}
	return &opened{planned: planned{objs: objs, upgrade: Upgrading(c.Recorded)}, cl: cl, timeout: cfg.Timeout}, nil
}

func init() { plugin.RegisterEnvironment("kubernetes", reachable) }

// reachable is the kubernetes capability of the environment: a kubeconfig
// (KUBECONFIG, else ~/.kube/config) whose cluster answers.
func reachable(ctx context.Context, env []string) error {
	dir, _ := os.Getwd()
	if _, err := connect(ctx, targetOf(config{}, nil, env), dir); err != nil {
		return fmt.Errorf("no kubeconfig reaches a cluster (%v)", err)
	}
	return nil
}

// refs are the ${...} references and the names #{...} expressions read in
// the manifests and a kustomization's generator inputs, each once, as a
// deploy expands them (params.RefsOf); inputs that cannot be read or
// parsed add none.
func (manifests) refs(req plugin.StagesRequest) []params.Part {
	cfg, err := parseConfig(req.Entry.Config)
	if err != nil {
		return nil
	}
	var out []params.Part
	seen := map[[2]string]bool{}
	_, _ = load(req.Dir, cfg, func(s string) (string, error) {
		for _, r := range params.RefsOf(s) {
			if k := [2]string{r.Component, r.Name}; !seen[k] {
				seen[k] = true
				out = append(out, params.Part{Kind: params.Ref, Component: r.Component, Name: r.Name})
			}
		}
		return s, nil
	})
	return out
}

// checkRefs reads the manifests again with every string's references and
// expressions parsed and compiled, not evaluated: the mistakes a deploy
// would meet when it expands them, each at its line and column: a syntax
// error, an expression that does not compile, and with unknown set, each
// reference the component cannot see (unknown says why), those of one
// value together.
func checkRefs(dir string, cfg config, unknown func(component, name string) string) error {
	_, err := load(dir, cfg, func(s string) (string, error) {
		t, err := params.Parse(s)
		if err == nil {
			err = t.Check()
		}
		if err != nil || unknown == nil {
			return s, err
		}
		var problems []string
		for _, r := range t.Refs() {
			if msg := unknown(r.Component, r.Name); msg != "" && !slices.Contains(problems, msg) {
				problems = append(problems, msg)
			}
		}
		if len(problems) > 0 {
			// One line: the loader puts the value's place before it.
			return s, errors.New(strings.Join(problems, "; "))
		}
		return s, nil
	})
	return err
}
