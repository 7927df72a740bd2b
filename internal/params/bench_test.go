package params

import (
	"fmt"
	"testing"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// benchStack builds a stack of nComp components with perComp parameters each:
// a third plain values, a third expressions over other parameters, a third
// looked up from the stack or from an earlier component's outputs.
func benchStack(nComp, perComp int) (*manifest.Stack, []*manifest.Component, *OutputIndex) {
	s := &manifest.Stack{Meta: manifest.Meta{Name: "bench"}}
	order := make([]string, nComp)
	comps := make([]*manifest.Component, nComp)
	for i := 0; i < nComp; i++ {
		name := fmt.Sprintf("c%04d", i)
		order[i] = name
		c := &manifest.Component{Meta: manifest.ComponentMeta{Name: name}}
		for j := 0; j < perComp; j++ {
			pn := fmt.Sprintf("%s.p%02d", name, j)
			switch j % 3 {
			case 0:
				s.Parameters = append(s.Parameters, manifest.Parameter{Name: pn, Value: manifest.Scalar(fmt.Sprint(i * j))})
				c.Parameters = append(c.Parameters, manifest.Parameter{Name: pn})
			case 1:
				s.Parameters = append(s.Parameters, manifest.Parameter{Name: pn, Value: manifest.Scalar(fmt.Sprintf("https://${%s.p%02d}.example.com", name, j-1))})
				c.Parameters = append(c.Parameters, manifest.Parameter{Name: pn})
			default:
				c.Parameters = append(c.Parameters, manifest.Parameter{Name: pn, Value: manifest.Scalar(fmt.Sprintf("${%s.p%02d}/#{%d + 1}", name, j-2, j))})
			}
		}
		if i > 0 {
			c.Parameters = append(c.Parameters, manifest.Parameter{Name: fmt.Sprintf("c%04d.out", i-1)})
		}
		comps[i] = c
	}
	x := NewOutputIndex(order)
	for i, name := range order {
		x.Declare(name, []string{name + ".out"})
		x.Set(name, map[string]string{name + ".out": fmt.Sprint(i)}, nil)
	}
	return s, comps, x
}

// BenchmarkLockExpand10k locks 10,000 parameters and expands those of 1,000
// components.
func BenchmarkLockExpand10k(b *testing.B) {
	s, comps, x := benchStack(1000, 10)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l, diags := Lock(LockInput{Stack: s, Env: func(string) (string, bool) { return "", false }, DeploymentID: "id"})
		if diags.HasErrors() {
			b.Fatal(diags.Err())
		}
		for _, c := range comps {
			if _, diags := ExpandComponent(ComponentInput{Locked: l, Component: c, Outputs: x}); diags.HasErrors() {
				b.Fatal(diags.Err())
			}
		}
	}
}
