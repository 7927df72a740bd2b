package helm

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/validate/content"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
)

func TestOwnershipOf(t *testing.T) {
	me := markOf("shop", "web")
	rev := func(desc string, labels map[string]string) *rspb.Release {
		return &rspb.Release{Name: "web", Labels: labels, Info: &rspb.Info{Status: rcommon.StatusDeployed, Description: desc}}
	}
	tests := []struct {
		name     string
		hist     []*rspb.Release
		recorded bool
		// live are the marks on the live objects of the manifest.
		live []mark
		want ownership
	}{
		{name: "no revision", want: ownership{standing: standNone}},
		{name: "its own mark", hist: []*rspb.Release{rev("Install complete", me.labels())}, want: ownership{standing: standOwn}},
		{name: "another stack's", hist: []*rspb.Release{rev("Install complete", markOf("blog", "web").labels())},
			recorded: true, want: ownership{standing: standOther, by: mark{"blog", "web"}}},
		{name: "another component's of its stack", hist: []*rspb.Release{rev("Install complete", markOf("shop", "db").labels())},
			want: ownership{standing: standOther, by: mark{"shop", "db"}}},
		{name: "the last marked revision counts", hist: []*rspb.Release{
			rev("Superseded by gantry", markOf("blog", "web").labels()), rev("Upgrade complete", me.labels()), rev("Upgrade complete", nil)},
			want: ownership{standing: standOwn}},
		{name: "helm's: no mark, no sign of gantry", hist: []*rspb.Release{rev("superseded by new release", nil), rev("Upgrade complete", nil)},
			want: ownership{standing: standHelm}},
		{name: "an older gantry's, recorded by the component", hist: []*rspb.Release{rev("Superseded by gantry", nil), rev("Upgrade complete", nil)},
			recorded: true, want: ownership{standing: standOwn}},
		{name: "an older gantry's, not recorded", hist: []*rspb.Release{rev("Superseded by gantry", nil), rev("Upgrade complete", nil)},
			want: ownership{standing: standUnmarked}},
		{name: "an older gantry's failed install", hist: []*rspb.Release{rev("gantry: apply configmap/x: denied", nil)},
			want: ownership{standing: standUnmarked}},
		// An older gantry's release deployed once says what helm says
		// ("Install complete"); its objects carry gantry's annotations.
		{name: "an older gantry's one revision, another component's objects", hist: []*rspb.Release{rev("Install complete", nil)},
			live: []mark{markOf("shop", "db"), markOf("shop", "db")}, want: ownership{standing: standOther, by: mark{"shop", "db"}, byObjects: true}},
		{name: "an older gantry's one revision, its own objects", hist: []*rspb.Release{rev("Install complete", nil)},
			live: []mark{me}, want: ownership{standing: standOwn, byObjects: true}},
		{name: "an older gantry's one revision, several components' objects", hist: []*rspb.Release{rev("Install complete", nil)},
			live: []mark{me, markOf("blog", "web")}, want: ownership{standing: standUnmarked}},
		{name: "the state's record comes before the objects", hist: []*rspb.Release{rev("Install complete", nil)},
			recorded: true, live: []mark{markOf("shop", "db")}, want: ownership{standing: standOwn}},
		{name: "a marked revision comes before the objects", hist: []*rspb.Release{rev("Install complete", me.labels())},
			live: []mark{markOf("shop", "db")}, want: ownership{standing: standOwn}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ownershipOf(tt.hist, me, tt.recorded, tt.live); got != tt.want {
				t.Errorf("ownershipOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestOwnershipMessages(t *testing.T) {
	me := markOf("shop", "web")
	for _, tt := range []struct {
		o       ownership
		refusal string // "" for none
		left    string
		// takenFrom is who a deploy takes the release over from.
		takenFrom string
	}{
		{o: ownership{standing: standNone}},
		{o: ownership{standing: standOwn}},
		{o: ownership{standing: standHelm}, left: "helm installed it, and this component never deployed it"},
		{o: ownership{standing: standOther, by: mark{"blog", "web"}},
			refusal: "helm release web in namespace ns belongs to component web of stack blog (labels gantry.dev/stack, gantry.dev/component of its revisions in helm's storage); gantry does not take over another stack's release: undeploy it there, or give this component another release name (the config's release, or COMPONENT_NAME). If it is this component's now (that stack no longer deploys it), mark it: kubectl label --overwrite secret -n ns -l owner=helm,name=web gantry.dev/stack=shop gantry.dev/component=web",
			left:    "it belongs to component web of stack blog"},
		{o: ownership{standing: standOther, by: mark{"blog", "web"}, byObjects: true},
			refusal: "belongs to component web of stack blog (the gantry.dev/stack and gantry.dev/component annotations of its objects: an older gantry", left: "it belongs to component web of stack blog"},
		// Another component of the stack: taken over, as its objects
		// are (a component renamed, a release moved between components).
		{o: ownership{standing: standOther, by: mark{"shop", "db"}},
			left: "it belongs to component db of this stack", takenFrom: "component db of this stack"},
		{o: ownership{standing: standUnmarked},
			refusal: "mark it: kubectl label secret -n ns -l owner=helm,name=web gantry.dev/stack=shop gantry.dev/component=web;",
			left:    "an older gantry deployed it"},
	} {
		err := tt.o.refusal("web", "ns", me)
		switch {
		case tt.refusal == "" && err != nil:
			t.Errorf("%+v: refused: %v", tt.o, err)
		case tt.refusal != "" && (err == nil || !strings.Contains(err.Error(), tt.refusal)):
			t.Errorf("%+v: refusal %v, want one with %q", tt.o, err, tt.refusal)
		}
		if got := tt.o.leftReason(me); !strings.HasPrefix(got, tt.left) || (tt.left == "") != (got == "") {
			t.Errorf("%+v: leftReason %q, want %q…", tt.o, got, tt.left)
		}
		if got := tt.o.takenFrom(me); got != tt.takenFrom {
			t.Errorf("%+v: takenFrom %q, want %q", tt.o, got, tt.takenFrom)
		}
	}
}

func TestLabelValue(t *testing.T) {
	long := strings.Repeat("a", 70)
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"shop", "shop"},
		{"my_stack.v2", "my_stack.v2"},
		{"My Stack", "My-Stack-"},
		{"-x-", "x-"},
		{"été", ""},
		{long, strings.Repeat("a", 50) + "-"},
	} {
		got := labelValue(tt.in)
		if errs := content.IsLabelValue(got); len(errs) > 0 {
			t.Errorf("labelValue(%q) = %q, not a label value: %v", tt.in, got, errs)
		}
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("labelValue(%q) = %q, want it to begin with %q", tt.in, got, tt.want)
		}
		if got != tt.in && labelValue(tt.in+"x") == got {
			t.Errorf("labelValue(%q) and labelValue(%q) are both %q", tt.in, tt.in+"x", got)
		}
	}
}
