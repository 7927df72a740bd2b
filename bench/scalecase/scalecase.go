// Package scalecase writes stacks that grow in a dimension other than the
// number of no-op components casegen grows: stack parameters, secrets,
// capabilities, nested stacks and lifecycle steps, one per component or
// more. bench/scale deploys them at two sizes: a cost per component that
// grows with the size is a cost that is quadratic somewhere.
package scalecase

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
)

// Shapes are the stacks Generate writes.
var Shapes = []string{"params", "secrets", "provides", "nested", "lifecycle", "outputs"}

// kinds is how many component folders the params shape spreads its
// components over: a component does not see the outputs of components of
// its own kind (meta.name), so each reads those of other kinds.
const kinds = 50

// Generate writes the stack of shape with n components (leaves, for
// nested) into dir: hub.yaml and its component folders. Every component
// runs a process and can be undeployed.
func Generate(dir, shape string, n int) error {
	rng := rand.New(rand.NewSource(1))
	g := &gen{dir: dir, rng: rng}
	switch shape {
	case "params":
		g.params(n)
	case "secrets":
		g.secrets(n)
	case "provides":
		g.provides(n)
	case "nested":
		g.nested(n)
	case "lifecycle":
		g.lifecycle(n)
	case "outputs":
		g.outputs(n)
	default:
		return fmt.Errorf("unknown shape %q (%s)", shape, strings.Join(Shapes, ", "))
	}
	return g.err
}

type gen struct {
	dir string
	rng *rand.Rand
	err error
}

func (g *gen) write(path, text string, mode os.FileMode) {
	if g.err != nil {
		return
	}
	path = filepath.Join(g.dir, path)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		g.err = err
		return
	}
	g.err = os.WriteFile(path, []byte(text), mode)
}

// folder writes a component folder: its manifest, a deploy script (or
// true when script is empty) and an undeploy that does nothing.
func (g *gen) folder(name, manifest, script string) {
	g.write(name+"/hub-component.yaml", manifest, 0o644)
	if script == "" {
		script = "#!/bin/sh\nexit 0\n"
	}
	g.write(name+"/deploy", script, 0o755)
	g.write(name+"/undeploy", "#!/bin/sh\nexit 0\n", 0o755)
}

func name(i int) string { return fmt.Sprintf("n%05d", i) }

// depends are up to three of the 100 components before i.
func (g *gen) depends(i int) string {
	if i == 0 {
		return ""
	}
	seen := map[int]bool{}
	var ds []string
	for k := 0; k < 3; k++ {
		j := i - 1 - g.rng.Intn(min(i, 100))
		if !seen[j] {
			seen[j] = true
			ds = append(ds, name(j))
		}
	}
	return "    depends: [" + strings.Join(ds, ", ") + "]\n"
}

func (g *gen) stack(meta string, comps, rest []string) {
	g.write("hub.yaml", "version: 1\nkind: stack\nmeta: {name: "+meta+"}\ncomponents:\n"+strings.Join(comps, "")+strings.Join(rest, ""), 0o644)
}

// params: three link parameters per component (12,000 stack parameters at
// 4,000), each reading an output of a component of another kind printed
// by its process.
func (g *gen) params(n int) {
	for k := 0; k < kinds; k++ {
		g.folder(fmt.Sprintf("c%02d", k), fmt.Sprintf(`version: 1
kind: component
meta: {name: kind%02d}
parameters:
  - {name: p1, env: P1}
  - {name: p2, env: P2}
  - {name: p3, env: P3}
outputs:
  - name: o1
  - name: o2
  - name: o3
`, k), "#!/bin/sh\nprintf 'Outputs:\\no1 = a-%s\\no2 = b\\no3 = c\\n' \"$P1\"\n")
	}
	var comps, ps []string
	ps = append(ps, "parameters:\n")
	for i := 0; i < n; i++ {
		comps = append(comps, fmt.Sprintf("  - name: %s\n    source: {dir: c%02d}\n", name(i), i%kinds))
		for p := 1; p <= 3; p++ {
			v := "x"
			if i >= kinds {
				j := i - 1 - g.rng.Intn(min(i, 200))
				for j%kinds == i%kinds {
					j = i - 1 - g.rng.Intn(min(i, 200))
				}
				v = fmt.Sprintf("${%s:o%d}", name(j), 1+g.rng.Intn(3))
			}
			ps = append(ps, fmt.Sprintf("  - {name: p%d, component: %s, kind: link, value: %q}\n", p, name(i), v))
		}
	}
	g.stack(fmt.Sprintf("params-%d", n), comps, ps)
}

// secrets: a password parameter of its own and a secret output per
// component, the password in a line of its output.
func (g *gen) secrets(n int) {
	g.folder("comp", `version: 1
kind: component
meta: {name: node}
parameters:
  - {name: db.password, env: DB_PASSWORD}
outputs:
  - {name: token, kind: secret}
`, "#!/bin/sh\necho \"connecting with $DB_PASSWORD\"\nprintf 'Outputs:\\ntoken = tok-%s\\n' \"$DB_PASSWORD\"\n")
	var comps, ps []string
	ps = append(ps, "parameters:\n")
	for i := 0; i < n; i++ {
		comps = append(comps, fmt.Sprintf("  - name: %s\n    source: {dir: comp}\n%s", name(i), g.depends(i)))
		ps = append(ps, fmt.Sprintf("  - {name: db.password, component: %s, value: pw-%08d-%08x}\n", name(i), i, g.rng.Uint32()))
	}
	g.stack(fmt.Sprintf("secrets-%d", n), comps, ps)
}

// provides: each component provides a capability of its own at run time
// (provides = in its outputs), so HUB_PROVIDES grows with the run.
func (g *gen) provides(n int) {
	g.folder("comp", "version: 1\nkind: component\nmeta: {name: node}\n",
		"#!/bin/sh\nprintf 'Outputs:\\nprovides = cap-%s\\n' \"$COMPONENT_NAME\"\n")
	var comps []string
	for i := 0; i < n; i++ {
		comps = append(comps, fmt.Sprintf("  - name: %s\n    source: {dir: comp}\n%s", name(i), g.depends(i)))
	}
	g.stack(fmt.Sprintf("provides-%d", n), comps, nil)
}

// nested: n/10 roles, each the same nested stack of ten components, with a
// config parameter of its own spread to each leaf.
func (g *gen) nested(n int) {
	g.folder("comp", "version: 1\nkind: component\nmeta: {name: leaf}\nparameters:\n  - {name: greeting, env: GREETING}\n", "")
	svc := []string{"version: 1\nkind: stack\nmeta: {name: svc}\nconfig:\n  parameter:\n    greeting: {type: string, default: hi}\ncomponents:\n"}
	for i := 0; i < 10; i++ {
		dep := ""
		if i > 0 {
			dep = fmt.Sprintf("    depends: [c%d]\n", g.rng.Intn(i))
		}
		svc = append(svc, fmt.Sprintf("  - name: c%d\n    source: {dir: ../comp}\n%s", i, dep))
	}
	svc = append(svc, "parameters:\n  - name: greeting\n    value: \"${config.parameter.greeting}\"\n")
	g.write("svc/hub.yaml", strings.Join(svc, ""), 0o644)
	var comps []string
	roles := max(n/10, 1)
	for i := 0; i < roles; i++ {
		dep := ""
		if i > 0 {
			dep = fmt.Sprintf("    depends: [r%04d]\n", i-1-g.rng.Intn(min(i, 50)))
		}
		comps = append(comps, fmt.Sprintf("  - name: r%04d\n    source: {stack: svc}\n%s    config: {parameter: {greeting: \"hello %d\"}}\n", i, dep, i))
	}
	g.stack(fmt.Sprintf("nested-%d", n), comps, nil)
}

// lifecycle: a pre_component and a post_component exec step per component.
func (g *gen) lifecycle(n int) {
	g.folder("comp", "version: 1\nkind: component\nmeta: {name: node}\n", "")
	var comps []string
	for i := 0; i < n; i++ {
		comps = append(comps, fmt.Sprintf("  - name: %s\n    source: {dir: comp}\n%s    lifecycle:\n      pre_component: {steps: [{exec: {arguments: [/bin/true]}}]}\n      post_component: {steps: [{exec: {arguments: [/bin/true]}}]}\n", name(i), g.depends(i)))
	}
	g.stack(fmt.Sprintf("lifecycle-%d", n), comps, nil)
}

// outputs: 100 outputs per component, printed by its process (a terraform
// module's), each component after up to three of the 100 before it.
func (g *gen) outputs(n int) {
	var decl, lines strings.Builder
	for k := 0; k < 100; k++ {
		fmt.Fprintf(&decl, "  - name: out%03d\n", k)
		fmt.Fprintf(&lines, "out%03d = value-%03d-$COMPONENT_NAME\n", k, k)
	}
	g.folder("comp", "version: 1\nkind: component\nmeta: {name: node}\noutputs:\n"+decl.String(),
		"#!/bin/sh\ncat <<EOF\nOutputs:\n"+lines.String()+"EOF\n")
	var comps []string
	for i := 0; i < n; i++ {
		comps = append(comps, fmt.Sprintf("  - name: %s\n    source: {dir: comp}\n%s", name(i), g.depends(i)))
	}
	g.stack(fmt.Sprintf("outputs-%d", n), comps, nil)
}
