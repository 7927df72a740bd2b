package helm

import (
	"crypto/sha256"
	"encoding/hex"
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
			live: []mark{{"shop", "db"}, {"shop", "db"}}, want: ownership{standing: standOther, by: mark{"shop", "db"}, byObjects: true, byName: mark{"shop", "db"}}},
		{name: "an older gantry's one revision, its own objects", hist: []*rspb.Release{rev("Install complete", nil)},
			live: []mark{{"shop", "web"}}, want: ownership{standing: standOwn, byObjects: true, byName: mark{"shop", "web"}}},
		{name: "an older gantry's one revision, several components' objects", hist: []*rspb.Release{rev("Install complete", nil)},
			live: []mark{{"shop", "web"}, {"blog", "web"}}, want: ownership{standing: standUnmarked}},
		{name: "an older gantry's revisions, another component's objects", hist: []*rspb.Release{rev("Superseded by gantry", nil), rev("Upgrade complete", nil)},
			live: []mark{{"shop", "db"}}, want: ownership{standing: standOther, by: mark{"shop", "db"}, byObjects: true, byName: mark{"shop", "db"}, gantryWrote: true}},
		// The annotations hold names as written; the mark, label values.
		{name: "objects of a stack whose name is not a label value", hist: []*rspb.Release{rev("Install complete", nil)},
			live: []mark{{"My Shop", "db"}}, want: ownership{standing: standOther, by: markOf("My Shop", "db"), byObjects: true, byName: mark{"My Shop", "db"}}},
		// A revision with one of the two labels names no component.
		{name: "a half mark is none", hist: []*rspb.Release{rev("Install complete", me.labels()), rev("Upgrade complete", map[string]string{labelStack: "shop"})},
			want: ownership{standing: standOwn}},
		{name: "the state's record comes before the objects", hist: []*rspb.Release{rev("Install complete", nil)},
			recorded: true, live: []mark{{"shop", "db"}}, want: ownership{standing: standOwn}},
		{name: "a marked revision comes before the objects", hist: []*rspb.Release{rev("Install complete", me.labels())},
			live: []mark{{"shop", "db"}}, want: ownership{standing: standOwn}},
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
		{o: ownership{standing: standOther, by: mark{"blog", "web"}, byObjects: true, byName: mark{"blog", "web"}},
			refusal: "belongs to component web of stack blog (the gantry.dev/stack and gantry.dev/component annotations of its objects: an older gantry, which did not mark releases, deployed it, or helm installed it and that component adopted its objects)", left: "it belongs to component web of stack blog"},
		{o: ownership{standing: standOther, by: mark{"blog", "web"}, byObjects: true, byName: mark{"blog", "web"}, gantryWrote: true},
			refusal: "belongs to component web of stack blog (the gantry.dev/stack and gantry.dev/component annotations of its objects: an older gantry, which did not mark releases, deployed it);", left: "it belongs to component web of stack blog"},
		// The objects name the stack as written, not as its label value.
		{o: ownership{standing: standOther, by: markOf("My Blog", "web"), byObjects: true, byName: mark{"My Blog", "web"}},
			refusal: "belongs to component web of stack My Blog (the gantry.dev", left: "it belongs to component web of stack My Blog"},
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
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return hex.EncodeToString(sum[:])[:12]
	}
	long := strings.Repeat("a", 70)
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"shop", "shop"},
		{"my_stack.v2", "my_stack.v2"},
		{"My Stack", "My-Stack-" + hash("My Stack")},
		{"-x-", "x-" + hash("-x-")},
		{"été", "t-" + hash("été")},
		{"日本", hash("日本")},
		{long, strings.Repeat("a", 50) + "-" + hash(long)},
		// A name that is a label value but ends as a hashed one does is
		// hashed too: it would collide with the name it is the form of.
		{"My-Stack-" + hash("My Stack"), "My-Stack-" + hash("My Stack") + "-" + hash("My-Stack-"+hash("My Stack"))},
		{hash("日本"), hash("日本") + "-" + hash(hash("日本"))},
		{"web-1", "web-1"},
		{"release-abcdef01234", "release-abcdef01234"}, // 11 hex digits
	} {
		got := labelValue(tt.in)
		if got != tt.want {
			t.Errorf("labelValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if errs := content.IsLabelValue(got); len(errs) > 0 {
			t.Errorf("labelValue(%q) = %q, not a label value: %v", tt.in, got, errs)
		}
		if labelValue(tt.in) != got {
			t.Errorf("labelValue(%q) is not stable", tt.in)
		}
	}
	// No two names write one value: a kept name is never a hashed form.
	names := []string{"My Stack", "My-Stack", "my stack", "My_Stack", "My-Stack-" + hash("My Stack"), hash("My Stack"), ""}
	seen := map[string]string{}
	for _, n := range names {
		v := labelValue(n)
		if other, ok := seen[v]; ok {
			t.Errorf("labelValue(%q) and labelValue(%q) are both %q", n, other, v)
		}
		seen[v] = n
	}
}
