package elaborate

import (
	"fmt"
	"strconv"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
)

// resolveConfig makes one stack instance's config concrete (seed 003
// "Order of consideration of defaults"): a given value beats this level's
// default, and defaults become concrete here, before anything is passed
// down. path is the instance's full path (shop, shop.web); outer is the
// enclosing level's config (nil at the top), whose resilience passes down;
// resources, when registered, are checked by name and type.
func resolveConfig(s *manifest.Stack, given *givenConfig, path string, outer *levelConfig, resources map[string]manifest.Resource, diags *manifest.Diagnostics) *levelConfig {
	spec := s.Config
	if spec == nil {
		spec = &manifest.ConfigSpec{}
	}
	if given == nil {
		given = &givenConfig{}
	}
	owner := s.Meta.Name
	out := &levelConfig{owner: owner, values: map[string]configValue{}, hsize: map[string]int{}, detail: map[string]map[string]*manifest.RoleScale{}, unset: map[string]bool{}}
	if outer != nil {
		out.budget = outer.budget
	} else {
		out.budget = params.NewBudget()
	}
	section := func(name string, fields map[string]*manifest.ConfigField, vals map[string]givenValue, resource bool) {
		base := path + ".config." + name
		for _, k := range manifest.SortedKeys(vals) {
			if _, ok := fields[k]; !ok {
				v := vals[k]
				msg := fmt.Sprintf("unknown field %q", k)
				if sg := manifest.Suggest(k, manifest.SortedKeys(fields)); sg != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", sg)
				} else if len(fields) > 0 {
					msg += fmt.Sprintf(" (%s declares %v)", owner, manifest.SortedKeys(fields))
				} else {
					msg += fmt.Sprintf(" (%s declares no config.%s)", owner, name)
				}
				diags.Errorf(v.pos, base+"."+k, "%s", msg)
			}
		}
		for _, k := range manifest.SortedKeys(fields) {
			f := fields[k]
			fp := base + "." + k
			if f == nil {
				continue
			}
			key := "config." + name + "." + k
			if !resource && !validParameterType(f.Type) {
				diags.Errorf(f.Pos, fp+".type", "expected one of string, number, bool, list, map, got %q", f.Type)
				out.unset[key] = false
				continue
			}
			if resource && f.Default != nil {
				diags.Errorf(f.Default.Pos, fp+".default", "a resource takes no default: resources are registered per environment (resources: in a params file) and passed by name")
			}
			if v, ok := vals[k]; ok {
				if text, ok := checkType(v, f.Type, fp, diags); ok {
					if resource {
						r, ok := checkResource(text, f.Type, v.pos, fp, resources, diags)
						if !ok {
							// Said once: what reads it is not told again.
							out.unset[key] = false
							continue
						}
						if out.resources == nil {
							out.resources = map[string]manifest.Resource{}
						}
						out.resources[key] = r
					}
					cv := configValue{text: text, pos: v.pos, from: v.givenFrom()}
					if v.origin != nil {
						cv.pos, cv.from = v.origin.pos, v.origin.from
					}
					out.values[key] = cv
				} else {
					out.unset[key] = false // reported: a reference to it need not be
				}
				continue
			}
			if !resource && f.Default != nil {
				if text, ok := checkType(givenValue{node: f.Default, pos: f.Default.Pos}, f.Type, fp+".default", diags); ok {
					out.values[key] = configValue{text: text, pos: f.Default.Pos, from: "default of " + owner}
				} else {
					out.unset[key] = false
				}
				continue
			}
			out.unset[key] = f.Optional
			if !f.Optional {
				diags.Errorf(f.Pos, fp, "missing required field %q: %s declares it without a default and no value was passed (give it in the referencing component's config: or, at the top, in a params file's config:)", k, owner)
			}
		}
	}
	section("parameter", spec.Parameter, given.parameter, false)
	section("resource", spec.Resource, given.resource, true)

	// Scale: given beats this level's default, else 1.
	roles := map[string]bool{}
	var roleNames []string
	for _, c := range s.Components {
		roles[c.Name] = true
		roleNames = append(roleNames, c.Name)
	}
	checkRoles := func(sc map[string]*manifest.RoleScale, where string) {
		for _, r := range manifest.SortedKeys(sc) {
			if !roles[r] {
				pos := manifest.Pos{File: s.File}
				if sc[r] != nil {
					pos = sc[r].Pos
				}
				msg := fmt.Sprintf("unknown role %q", r)
				if sg := manifest.Suggest(r, roleNames); sg != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", sg)
				}
				diags.Errorf(pos, where+"."+r, "%s: %s has components %v", msg, owner, roleNames)
			}
		}
	}
	checkRoles(spec.Scale, path+".config.scale")
	checkRoles(given.scale, path+".config.scale")
	for _, c := range s.Components {
		rs := mergeScale(spec.Scale[c.Name], given.scale[c.Name])
		h := 1
		if rs != nil && rs.HSize != nil {
			h = *rs.HSize
			if h < 0 {
				diags.Errorf(rs.Pos, path+".config.scale."+c.Name+".hsize", "expected a number of instances (0 or more), got %d", h)
			}
		}
		out.hsize[c.Name] = h
		out.values["config.scale."+c.Name+".hsize"] = scaleOrigin(h, spec.Scale[c.Name], given.scale[c.Name], owner)
		if rs != nil && len(rs.Detail) > 0 {
			if c.Source.Stack == "" {
				diags.Errorf(rs.Pos, path+".config.scale."+c.Name+".detail", "role %q is a component, not a nested stack: detail has nothing to descend into", c.Name)
			} else {
				out.detail[c.Name] = rs.Detail
			}
		}
	}

	// Resilience: given, else what the
	// enclosing level has (passed down), which beats this level's default.
	res := configValue{from: "no resilience given"}
	switch {
	case outer != nil:
		out.resilience = outer.resilience
		res = outer.values["config.resilience"]
	case spec.Resilience != nil && spec.Resilience.Default != nil:
		out.resilience = *spec.Resilience.Default
		res = configValue{pos: spec.Resilience.Pos, from: "default of " + owner}
	}
	if v := given.resilience; v != nil {
		if text, ok := checkType(*v, "number", path+".config.resilience", diags); ok {
			if n, err := strconv.Atoi(text); err == nil && n >= 0 {
				out.resilience = n
				res = configValue{pos: v.pos, from: v.givenFrom()}
				if v.origin != nil {
					res = *v.origin
				}
			} else {
				diags.Errorf(v.pos, path+".config.resilience", "expected a whole number of 0 or more, got %s", text)
			}
		}
	}
	res.text = strconv.Itoa(out.resilience)
	out.values["config.resilience"] = res
	return out
}

// scaleOrigin is a role's hsize as a config value with the level that set
// it: what was given (by the referencing component or an outer detail),
// else this stack's scale default, else 1.
func scaleOrigin(h int, spec, given *manifest.RoleScale, owner string) configValue {
	v := configValue{text: strconv.Itoa(h), from: "no scale given"}
	switch {
	case given != nil && given.HSize != nil:
		v.pos, v.from = given.Pos, given.By
		if v.from == "" {
			v.from = "given"
		}
	case spec != nil && spec.HSize != nil:
		v.pos, v.from = spec.Pos, "default of "+owner
	}
	return v
}

// checkResource checks a resource reference against the resources the
// params files register, and returns the one it names (ok false when none
// is registered by that name and type).
func checkResource(name, typ string, pos manifest.Pos, path string, resources map[string]manifest.Resource, diags *manifest.Diagnostics) (manifest.Resource, bool) {
	r, ok := resources[name]
	switch {
	case resources == nil:
		diags.Errorf(pos, path, "resource %q is not registered: no params file registers resources (a resources: section with name, type and value)", name)
	case !ok:
		diags.Errorf(pos, path, "resource %q is not registered (resources: in a params file registers it)", name)
	case r.Type != typ:
		diags.Errorf(pos, path, "resource %q is a %s, expected a %s", name, r.Type, typ)
		ok = false
	}
	return r, ok
}
