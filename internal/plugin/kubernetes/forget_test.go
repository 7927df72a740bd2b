package kubernetes

import (
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/state"
)

// TestLastHolderDeletes: x and y both record namespace s4 and give it up
// at once (undeploy or prune with --parallel): exactly one of them deletes
// it, the other forgets it — never both leave it to the other (nobody
// deleting it, nobody recording it), whatever the interleaving. Before,
// each read who else held it once, at the start of its deletion: both saw
// the other, both left it and forgot it.
func TestLastHolderDeletes(t *testing.T) {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName("s4")
	o := &object{u: ns}
	res := resourceOf(o)
	live := metaWith(gantryMarks("own", "y"))
	for i := range 50 {
		st := state.New("own")
		for _, c := range []string{"x", "y"} {
			st.Component(c).Plugins = []state.PluginInstance{{Name: "kubernetes", Key: c, Resources: []state.Resource{res}}}
		}
		rec := state.NewRecorder(filepath.Join(t.TempDir(), "hub.yaml.state"), st)
		var wg sync.WaitGroup
		whys := make([]string, 2)
		for j, c := range []string{"x", "y"} {
			r := &release{id: identity{stack: "own", component: c},
				forgetIfHeld: plugin.ForgetIfHeldIn(rec, c, c, c)}
			wg.Go(func() {
				why, err := r.keepOrForget(o, res, live)
				if err != nil {
					t.Error(err)
				}
				whys[j] = why
			})
		}
		wg.Wait()
		deleters := 0
		for _, why := range whys {
			if why == "" {
				deleters++
			}
		}
		if deleters != 1 {
			t.Fatalf("round %d: %d of x and y delete the namespace (reasons %q), want 1", i, deleters, whys)
		}
		var holders int
		rec.View(func(st *state.State) {
			holders = len(plugin.OtherResources(st, "", ""))
		})
		if holders != 1 {
			t.Fatalf("round %d: %d components still record it, want 1 (the one that deletes it)", i, holders)
		}
		_ = rec.Close()
	}
}
