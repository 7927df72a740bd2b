package elaborate

import (
	"sort"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/secret"
)

// paramSet merges parameters in assembly order by the rules of seed 000, as
// the Hub CLI's elaborate merges them: kind: user beats tech; later
// non-empty value, default, fromEnv, env and brief overwrite, as does a
// later secret: true or false; empty: allow is dropped once a merge leaves a
// value; an unqualified parameter also merges into every earlier parameter
// of the same name qualified for a component of the stack.
type paramSet struct {
	list       []*manifest.Parameter
	index      map[string]*manifest.Parameter   // by qualified name
	qualified  map[string][]*manifest.Parameter // qualified parameters by plain name, in order
	components map[string]bool                  // the stack's components
	diags      *manifest.Diagnostics
}

func newParamSet(components []manifest.ComponentRef, diags *manifest.Diagnostics) *paramSet {
	s := &paramSet{
		index:      map[string]*manifest.Parameter{},
		qualified:  map[string][]*manifest.Parameter{},
		components: map[string]bool{},
		diags:      diags,
	}
	for _, c := range components {
		s.components[c.Name] = true
	}
	return s
}

// userIfFrom gives kind: user to a parameter without a kind that reads
// fromEnv or fromFile, as the Hub CLI does before it merges parameters; no
// other parameter gets a kind it does not declare.
func userIfFrom(p *manifest.Parameter) {
	if p.Kind == "" && (p.FromEnv != "" || p.FromFile != "") {
		p.Kind = manifest.KindUser
	}
}

func (s *paramSet) add(p manifest.Parameter) {
	userIfFrom(&p)
	q := p.QName()
	if cur, ok := s.index[q]; ok {
		s.merge(cur, &p)
	} else {
		np := p
		s.list = append(s.list, &np)
		s.index[q] = &np
		if np.Component != "" && s.components[np.Component] {
			s.qualified[np.Name] = append(s.qualified[np.Name], &np)
		}
	}
	if p.Component != "" {
		return
	}
	for _, cur := range s.qualified[p.Name] {
		if p.Value != "" && cur.Value != "" && p.Value != cur.Value {
			// Either declaration may make the value secret (secret: true on
			// the later one, a secret name on the earlier): then neither
			// value is shown.
			hide := cur.IsSecret() || p.IsSecret()
			s.diags.Warnf(p.Pos, "", "parameter %q overrides the value of %q given at %s (%s → %s)",
				p.Name, cur.QName(), cur.Origin.FileLine(), secret.Shown(string(cur.Value), hide), secret.Shown(string(p.Value), hide))
		}
		s.merge(cur, &p)
	}
}

// merge merges add into cur; a merge that leaves a value drops empty: allow,
// as the Hub CLI's does (a parameter given once keeps it).
func (s *paramSet) merge(cur, add *manifest.Parameter) {
	mergeParameter(cur, add)
	if cur.Value != "" {
		cur.Empty = ""
	}
}

// mergeParameter merges the fields add gives into cur.
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

// sorted returns the merged parameters sorted by qualified name
// (name|component), byte by byte as the Hub CLI sorts them: a parameter
// keeps the kind it was given (none when it has none).
func (s *paramSet) sorted() []manifest.Parameter {
	out := make([]manifest.Parameter, len(s.list))
	for i, p := range s.list {
		out[i] = *p
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].QName() < out[j].QName() })
	return out
}
