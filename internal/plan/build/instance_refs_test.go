package build

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plugin"
)

// referencingFake is a staged plugin whose instances read ${<arg>:url}, and
// which counts how often it was asked.
type referencingFake struct {
	stagedFake
	calls *int
}

func (f referencingFake) InputRefs(req plugin.StagesRequest) []params.Part {
	*f.calls++
	var out []params.Part
	for _, a := range req.Entry.Args {
		out = append(out, params.Part{Kind: params.Ref, Component: a, Name: "url"})
	}
	return out
}

var referencingCalls int

// instanceRead is one component's instances read from a folder.
type instanceRead struct {
	c   *manifest.Component
	dir string
}

func init() {
	plugin.Register("referencing-fake", referencingFake{calls: &referencingCalls}, plugin.ForLists)
}

// TestInstanceReaderReadsEachInstanceOnce: components sharing a folder and
// an entry read its files once (a kustomize build each time made a plan of
// 1,000 such components 20 times slower); another entry or folder is read
// on its own; a setup plugin's instance, which applies nothing, is not read.
func TestInstanceReaderReadsEachInstanceOnce(t *testing.T) {
	db := []params.Part{{Kind: params.Ref, Component: "db", Name: "url"}}
	cache := []params.Part{{Kind: params.Ref, Component: "cache", Name: "url"}}
	setup := &manifest.Component{Meta: manifest.ComponentMeta{Name: "s"}, SetupPlugins: []manifest.PluginEntry{entry("referencing-fake", "db")}}
	for _, tc := range []struct {
		name  string
		reads []instanceRead
		want  [][]params.Part
		calls int
	}{
		{"one folder, one entry", []instanceRead{{comp("a", entry("referencing-fake", "db")), "/src/x"}, {comp("b", entry("referencing-fake", "db")), "/src/x"}, {comp("c", entry("referencing-fake", "db")), "/src/x"}},
			[][]params.Part{db, db, db}, 1},
		{"another folder or entry", []instanceRead{{comp("a", entry("referencing-fake", "db")), "/src/x"}, {comp("b", entry("referencing-fake", "db")), "/src/y"}, {comp("c", entry("referencing-fake", "cache")), "/src/x"}},
			[][]params.Part{db, db, cache}, 3},
		{"setup plugins", []instanceRead{{setup, "/src/x"}},
			[][]params.Part{nil}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			referencingCalls = 0
			ir := newInstanceReader()
			var got [][]params.Part
			for _, r := range tc.reads {
				got = append(got, ir.refs(r.c, r.dir))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("refs (-want +got):\n%s", diff)
			}
			if referencingCalls != tc.calls {
				t.Errorf("InputRefs called %d times, want %d", referencingCalls, tc.calls)
			}
		})
	}
}
