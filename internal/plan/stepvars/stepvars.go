// Package stepvars gives lifecycle steps the special variables of seed 001:
// {{.project}}, {{.component}}, {{.image}}, {{.id}}, {{.ipaddr}}, {{.index}}
// and {{.Model}}, the elaborated stack. The builders check steps with them
// before anything runs, and the steps expand their arguments with them.
package stepvars

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
)

// For returns the variables of a component's steps, or of the stack's when
// comp is nil (only .project and .Model).
func For(res *elaborate.Result, locked *params.Locked, comp *manifest.Component, model map[string]any) map[string]any {
	vars := map[string]any{"project": res.Stack.Meta.Name, "Model": model}
	if comp == nil {
		return vars
	}
	image := comp.Meta.Image
	if image == "" {
		image = comp.Meta.Version
	}
	id := comp.Meta.Name
	if locked != nil {
		id = locked.DeploymentID + "-" + comp.Meta.Name
	}
	vars["component"] = comp.Meta.Name
	vars["image"] = image
	vars["id"] = id
	vars["ipaddr"] = ""
	vars["index"] = 0
	return vars
}

// Model is .Model: the elaborated stack, with its components by name and the
// locked parameters that are not secret.
func Model(res *elaborate.Result, locked *params.Locked) map[string]any {
	comps := map[string]any{}
	for _, c := range res.Components {
		image := c.Meta.Image
		if image == "" {
			image = c.Meta.Version
		}
		ps := map[string]string{}
		for _, p := range c.Parameters {
			v := string(p.Value)
			if v == "" {
				v = string(p.Default)
			}
			ps[p.Name] = v
		}
		comps[c.Meta.Name] = map[string]any{
			"Name": c.Meta.Name, "Meta": c.Meta, "Image": image, "Version": c.Meta.Version,
			"Requires": c.Requires, "Provides": c.Provides, "Parameters": ps,
		}
	}
	stackParams := map[string]string{}
	if locked != nil {
		for _, v := range locked.Values() {
			if !v.Secret {
				stackParams[v.QName()] = v.Value
			}
		}
	}
	s := res.Stack
	return map[string]any{"Name": s.Meta.Name, "Meta": s.Meta, "Components": comps, "Parameters": stackParams}
}

// Apply runs a value through Go's text/template with the variables, under
// the bounds of component templates (component.ExecuteGo); an unknown
// variable is an error that lists the known ones.
func Apply(v string, vars map[string]any) (string, error) {
	if !strings.Contains(v, "{{") {
		return v, nil
	}
	out, err := component.ExecuteGo("step", v, vars)
	if err != nil {
		var limit *component.LimitError
		if errors.As(err, &limit) {
			return "", fmt.Errorf("in %q: %s", v, limit.Msg)
		}
		msg := err.Error()
		if i := strings.Index(msg, "map has no entry for key "); i >= 0 {
			key := strings.Trim(msg[i+len("map has no entry for key "):], `"`)
			names := make([]string, 0, len(vars))
			for k := range vars {
				names = append(names, "."+k)
			}
			sort.Strings(names)
			return "", fmt.Errorf("unknown variable .%s in %q (known here: %s)", key, v, strings.Join(names, ", "))
		}
		return "", fmt.Errorf("in %q: %s", v, strings.TrimPrefix(msg, "template: step:"))
	}
	return out, nil
}
