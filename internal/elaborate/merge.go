package elaborate

import (
	"sort"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// paramSet merges parameters in assembly order by the rules of seed 000:
// kind: user beats tech; later non-empty value, default, fromEnv, env and brief
// overwrite, as does a later secret: true or false; an unqualified parameter
// also merges into every earlier qualified parameter of the same name.
type paramSet struct {
	list      []*manifest.Parameter
	index     map[string]*manifest.Parameter   // by qualified name
	qualified map[string][]*manifest.Parameter // qualified parameters by plain name, in order
	diags     *manifest.Diagnostics
}

func newParamSet(diags *manifest.Diagnostics) *paramSet {
	return &paramSet{
		index:     map[string]*manifest.Parameter{},
		qualified: map[string][]*manifest.Parameter{},
		diags:     diags,
	}
}

func (s *paramSet) add(p manifest.Parameter) {
	q := p.QName()
	if cur, ok := s.index[q]; ok {
		mergeParameter(cur, &p)
	} else {
		np := p
		s.list = append(s.list, &np)
		s.index[q] = &np
		if np.Component != "" {
			s.qualified[np.Name] = append(s.qualified[np.Name], &np)
		}
	}
	if p.Component != "" {
		return
	}
	for _, cur := range s.qualified[p.Name] {
		if p.Value != "" && cur.Value != "" && p.Value != cur.Value {
			s.diags.Warnf(p.Pos, "", "parameter %q overrides the value of %q given at %s (%s → %s)",
				p.Name, cur.QName(), cur.Origin.FileLine(), shown(cur, string(cur.Value)), shown(cur, string(p.Value)))
		}
		mergeParameter(cur, &p)
	}
}

// shown masks values of parameters whose name looks secret.
func shown(p *manifest.Parameter, v string) string {
	if p.IsSecret() {
		return "*****"
	}
	return "\"" + v + "\""
}

func mergeParameter(cur, add *manifest.Parameter) {
	switch {
	case add.Kind == "":
	case add.Kind == manifest.KindTech && cur.Kind == manifest.KindUser:
		// kind: user takes priority over kind: tech.
	default:
		cur.Kind = add.Kind
	}
	contributed := false
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
			contributed = true
		}
	}
	set((*string)(&cur.Value), string(add.Value))
	set((*string)(&cur.Default), string(add.Default))
	set(&cur.FromEnv, add.FromEnv)
	set(&cur.FromFile, add.FromFile)
	if contributed {
		cur.Origin = add.Pos
	}
	if add.Env != "" {
		cur.Env = add.Env
	}
	if add.Brief != "" {
		cur.Brief = add.Brief
	}
	if add.Description != "" {
		cur.Description = add.Description
	}
	if add.Empty != "" {
		cur.Empty = add.Empty
	}
	if add.Secret != nil {
		cur.Secret = add.Secret
	}
}

// sorted returns the merged parameters sorted by qualified name, unqualified
// before qualified ones of the same name; top-level parameters without a kind
// are user parameters.
func (s *paramSet) sorted() []manifest.Parameter {
	out := make([]manifest.Parameter, len(s.list))
	for i, p := range s.list {
		out[i] = *p
		if out[i].Kind == "" {
			out[i].Kind = manifest.KindUser
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Component < out[j].Component
	})
	return out
}
