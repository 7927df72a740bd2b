package action

import (
	"context"
	"flag"
	"fmt"
	"os"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// stackGen makes a stack from fuzz bytes: the bytes choose the shape
// (components, dependencies, parameters and what their values refer to,
// templates, lifecycle steps, plugin lists), and raw runs of them become
// names and values, so the fuzzer explores valid stacks and near misses
// alike.
type stackGen struct {
	data []byte
	i    int
}

func (g *stackGen) byte() byte {
	if g.i >= len(g.data) {
		return 0
	}
	b := g.data[g.i]
	g.i++
	return b
}

func (g *stackGen) intn(n int) int { return int(g.byte()) % n }

// text is a short run of the input, as it is: quotes, newlines and NULs
// included, for values that must be handled whatever they hold.
func (g *stackGen) text() string {
	n := g.intn(12)
	var b strings.Builder
	for k := 0; k < n; k++ {
		b.WriteByte(g.byte())
	}
	return b.String()
}

// value is the value of parameter own: a constant, a reference or two to other
// parameters (cycles and doublings included), a filter, a CEL expression
// or raw text.
func (g *stackGen) value(own, params int) string {
	// Mostly a parameter before this one; now and then any (a cycle).
	ref := func() string {
		if own > 0 && g.intn(8) != 0 {
			return fmt.Sprintf("p%d", g.intn(own))
		}
		return fmt.Sprintf("p%d", g.intn(params))
	}
	switch g.intn(8) {
	case 0:
		return "${" + ref() + "}${" + ref() + "}"
	case 1:
		return "${" + ref() + "/" + []string{"base64", "unbase64", "json", "yaml", "x"}[g.intn(5)] + "}"
	case 2:
		return "#{" + ref() + " + " + ref() + "}"
	case 3:
		return "#{size(" + ref() + ") * 2}"
	case 4:
		return fmt.Sprintf("%q", g.text())
	default:
		return fmt.Sprintf("v%d", g.byte())
	}
}

func (g *stackGen) files() map[string]string {
	nComps, nParams := 1+g.intn(8), g.intn(24)
	files := map[string]string{}
	var stack strings.Builder
	stack.WriteString("version: 1\nkind: stack\nmeta: {name: fuzz}\ncomponents:\n")
	for c := 0; c < nComps; c++ {
		name := fmt.Sprintf("c%d", c)
		dir := name
		if g.intn(4) == 0 {
			dir = "c0" // a folder used twice
		}
		fmt.Fprintf(&stack, "  - name: %s\n    source: {dir: %s}\n", name, dir)
		// Mostly on an earlier component; now and then a later one (a cycle
		// when that one depends back).
		if d := g.intn(nComps + 2); d < c || d < nComps && g.intn(8) == 0 {
			fmt.Fprintf(&stack, "    depends: [c%d]\n", d)
		}
		var comp strings.Builder
		fmt.Fprintf(&comp, "version: 1\nkind: component\nmeta: {name: %s}\nparameters:\n", dir)
		for p := 0; p < nParams; p++ {
			if g.intn(2) == 0 {
				fmt.Fprintf(&comp, "  - name: p%d\n", p)
			}
		}
		if g.intn(3) == 0 {
			comp.WriteString("templates:\n  files: [\"*.template\"]\n")
			files[dir+"/app.conf.template"] = "${p0} #{p1}\n"
		}
		switch g.intn(5) {
		case 0:
			comp.WriteString("plugins:\n  - echo: [\"${p0}\"]\n  - parallel: [{delay: 1s}, {echo: [x]}]\n")
		case 1:
			fmt.Fprintf(&comp, "lifecycle:\n  pre_component:\n    steps:\n      - exec: [\"true\", %q]\n      - delay: %d\n", "${p"+fmt.Sprint(g.intn(nParams+1))+"}", g.intn(3))
		case 2:
			fmt.Fprintf(&comp, "outputs:\n  - name: o%d\n    value: %q\n", c, "${p0}")
		}
		if _, done := files[dir+"/hub-component.yaml"]; !done {
			files[dir+"/hub-component.yaml"] = comp.String()
			files[dir+"/Makefile"] = "deploy:\n\t@true\nundeploy:\n\t@true\n"
		}
	}
	stack.WriteString("parameters:\n")
	for p := 0; p < nParams; p++ {
		fmt.Fprintf(&stack, "  - name: p%d\n    value: %q\n", p, g.value(p, nParams))
		if g.intn(6) == 0 {
			fmt.Fprintf(&stack, "  - name: p%d\n    component: c%d\n    value: %q\n", p, g.intn(nComps), g.value(p, nParams))
		}
	}
	files["hub.yaml"] = stack.String()
	return files
}

// fuzzing reports whether the fuzzer runs (not only the seed corpus): only
// then is an input's time checked — a seed's time depends on the machine.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// FuzzStackToPlan feeds random stacks through elaborate, parameter locking
// and planning (what `gantry plan` does). Each input ends in a plan the
// executor accepts or in an error — never a panic — allocates at most
// 1 GiB, and while fuzzing takes at most 20 s; nothing is written next to
// the stack.
func FuzzStackToPlan(f *testing.F) {
	for _, s := range []string{"", "\x03\x05\x01\x02\x00\x07", "\x07\x17\x00\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09",
		strings.Repeat("\x00\x01", 40), strings.Repeat("\x05\x10\x00", 60)} {
		f.Add([]byte(s))
	}
	wd, err := os.Getwd()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		files := (&stackGen{data: data}).files()
		dir := writeStack(t, files)
		if err := os.Chdir(dir); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = os.Chdir(wd) }()
		var before goruntime.MemStats
		goruntime.ReadMemStats(&before)
		start := time.Now()
		p, err := (&Plan{Source: Source{Manifest: "hub.yaml"}, Verb: plan.VerbDeploy}).Run(context.Background())
		took := time.Since(start)
		var after goruntime.MemStats
		goruntime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<30 {
			t.Errorf("planning allocated %d MiB\n%s", alloc>>20, files["hub.yaml"])
		}
		if fuzzing() && took > 20*time.Second {
			t.Errorf("planning took %v\n%s", took, files["hub.yaml"])
		}
		if err == nil {
			t.Logf("a plan of %d steps", len(p.Nodes))
			if verr := p.Validate(); verr != nil {
				t.Errorf("the plan is not valid: %v", verr)
			}
		} else if t.Logf("refused: %.300s", describe(err)); !IsInvalid(err) {
			if _, nothing := err.(*Nothing); !nothing {
				t.Errorf("not an input error: %v\n%s", err, files["hub.yaml"])
			}
		}
		for _, leftover := range []string{"hub.yaml.state", ".gantry"} {
			if _, err := os.Stat(leftover); err == nil {
				t.Errorf("planning wrote %s", leftover)
			}
		}
	})
}

// describe is an error with its diagnostics, for the fuzzer's log.
func describe(err error) string {
	if ie, ok := err.(*InvalidError); ok && len(ie.Diags) > 0 {
		return ie.Diags.Err().Error()
	}
	return err.Error()
}
