package helm

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
)

// revision is a stored revision of release web for the tests.
func revision(version int, st rcommon.Status, desc string, labels map[string]string) *rspb.Release {
	return &rspb.Release{Name: "web", Namespace: "ns", Version: version, Labels: labels,
		Info: &rspb.Info{Status: st, Description: desc}}
}

// storeOf is a memory storage holding revisions.
func storeOf(t *testing.T, revs ...*rspb.Release) *storage.Storage {
	t.Helper()
	store := storage.Init(driver.NewMemory())
	for _, r := range revs {
		if err := store.Create(r); err != nil {
			t.Fatal(err)
		}
	}
	return store
}

// A deploy that finishes marks the revisions its own killed runs left
// pending or uninstalling as failed, saying so, and supersedes the
// deployed one. Pending revisions gantry did not write for this component
// (helm's, another component's) are left as they are: they may be an
// operation in progress.
func TestFinishEndsInterruptedRevisions(t *testing.T) {
	me := markOf("shop", "web")
	other := markOf("shop", "api").labels()
	store := storeOf(t,
		revision(1, rcommon.StatusSuperseded, "was superseded", nil),
		revision(2, rcommon.StatusPendingUpgrade, "Preparing upgrade", nil), // helm's
		revision(3, rcommon.StatusDeployed, "Upgrade complete", me.labels()),
		revision(4, rcommon.StatusFailed, "was failed", me.labels()),
		revision(5, rcommon.StatusPendingUpgrade, descDeploying, me.labels()),
		revision(6, rcommon.StatusUninstalling, descUninstalling, me.labels()),
		revision(7, rcommon.StatusPendingRollback, "Rollback \"web\"", me.labels()), // helm rollback's
		revision(8, rcommon.StatusPendingUpgrade, descDeploying, other),
		revision(9, rcommon.StatusUninstalling, "Deletion in progress (or silently failed)", nil), // helm uninstall's
		revision(10, rcommon.StatusPendingInstall, descDeploying, nil),                            // an older gantry's
	)
	hist, err := history(store, "web")
	if err != nil {
		t.Fatal(err)
	}
	next := revision(11, rcommon.StatusPendingUpgrade, descDeploying, me.labels())
	r := &record{store: store, name: "web", hist: hist, rel: next, me: me}
	ctx := context.Background()
	if err := r.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := r.Finish(ctx, &out); err != nil {
		t.Fatal(err)
	}
	hist, err = history(store, "web")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		status rcommon.Status
		desc   string
	}{
		{rcommon.StatusSuperseded, "was superseded"},
		{rcommon.StatusPendingUpgrade, "Preparing upgrade"},
		{rcommon.StatusSuperseded, "Superseded by gantry"},
		{rcommon.StatusFailed, "was failed"},
		{rcommon.StatusFailed, "gantry: interrupted while pending-upgrade; revision 11 was deployed after it"},
		{rcommon.StatusFailed, "gantry: interrupted while uninstalling; revision 11 was deployed after it"},
		{rcommon.StatusPendingRollback, "Rollback \"web\""},
		{rcommon.StatusPendingUpgrade, descDeploying},
		{rcommon.StatusUninstalling, "Deletion in progress (or silently failed)"},
		{rcommon.StatusFailed, "gantry: interrupted while pending-install; revision 11 was deployed after it"},
		{rcommon.StatusDeployed, "Upgrade complete"},
	}
	if len(hist) != len(want) {
		t.Fatalf("%d revisions, want %d", len(hist), len(want))
	}
	for i, w := range want {
		if got := hist[i].Info; got.Status != w.status || got.Description != w.desc {
			t.Errorf("revision %d: %s %q, want %s %q", i+1, got.Status, got.Description, w.status, w.desc)
		}
	}
	if !strings.Contains(out.String(), "release web revision 11 deployed") {
		t.Errorf("output %q", out.String())
	}
}

// A deploy that takes the release over from a component that left the
// stack (renamed) ends that component's killed runs as its own: nothing
// else ever will. Another stack's are left alone.
func TestFinishTakeoverEndsPreviousOwnersRuns(t *testing.T) {
	me, was := markOf("shop", "c"), markOf("shop", "a")
	store := storeOf(t,
		revision(1, rcommon.StatusDeployed, "Install complete", was.labels()),
		revision(2, rcommon.StatusUninstalling, descUninstalling, markOf("other", "a").labels()),
		revision(3, rcommon.StatusPendingUpgrade, descDeploying, was.labels()),
	)
	hist, err := history(store, "web")
	if err != nil {
		t.Fatal(err)
	}
	r := &record{store: store, name: "web", hist: hist, rel: revision(4, rcommon.StatusPendingUpgrade, descDeploying, me.labels()), me: me, takeover: true}
	if err := r.Begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := r.Finish(context.Background(), &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if hist, err = history(store, "web"); err != nil {
		t.Fatal(err)
	}
	for i, w := range []string{"superseded Superseded by gantry", "uninstalling " + descUninstalling,
		"failed gantry: interrupted while pending-upgrade; revision 4 was deployed after it", "deployed Upgrade complete"} {
		if got := hist[i].Info.Status.String() + " " + hist[i].Info.Description; got != w {
			t.Errorf("revision %d: %s, want %s", i+1, got, w)
		}
	}
}

// Finish reads each revision again before it changes it: one that helm
// changed after Open (a helm upgrade that finished) is not overwritten
// with the copy Open read.
func TestFinishLeavesRevisionsChangedMeanwhile(t *testing.T) {
	me := markOf("shop", "web")
	store := storeOf(t,
		revision(1, rcommon.StatusDeployed, "Install complete", me.labels()),
		revision(2, rcommon.StatusPendingUpgrade, descDeploying, me.labels()),
	)
	hist, err := history(store, "web") // Open
	if err != nil {
		t.Fatal(err)
	}
	r := &record{store: store, name: "web", hist: hist, rel: revision(3, rcommon.StatusPendingUpgrade, descDeploying, me.labels()), me: me}
	if err := r.Begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Meanwhile someone changes both.
	for _, rev := range []*rspb.Release{
		revision(1, rcommon.StatusSuperseded, "Superseded", me.labels()),
		revision(2, rcommon.StatusDeployed, "Upgrade complete", me.labels()),
	} {
		if err := store.Update(rev); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Finish(context.Background(), &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	hist, err = history(store, "web")
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []string{"superseded Superseded", "deployed Upgrade complete", "deployed Upgrade complete"} {
		if got := hist[i].Info.Status.String() + " " + hist[i].Info.Description; got != w {
			t.Errorf("revision %d: %s, want %s", i+1, got, w)
		}
	}
}

// A deploy is refused while the release's last revision is pending and
// not a killed gantry run of the component's: helm runs an operation on
// it, or did until it was killed.
func TestInProgress(t *testing.T) {
	me := markOf("shop", "web")
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	deployed := revision(1, rcommon.StatusDeployed, "Install complete", me.labels())
	pending := func(st rcommon.Status, desc string, labels map[string]string) *rspb.Release {
		r := revision(2, st, desc, labels)
		r.Info.LastDeployed = now.Add(-90 * time.Second)
		return r
	}
	helmOnly := revision(1, rcommon.StatusDeployed, "Install complete", nil)
	tests := []struct {
		name     string
		first    *rspb.Release // the revision before the last; deployed unless said
		last     *rspb.Release
		takeover bool
		want     string // "" for no refusal
	}{
		{"deployed", nil, revision(2, rcommon.StatusDeployed, "Upgrade complete", me.labels()), false, ""},
		{"failed", nil, revision(2, rcommon.StatusFailed, "gantry: x", me.labels()), false, ""},
		{"helm upgrade running", nil, pending(rcommon.StatusPendingUpgrade, "Preparing upgrade", me.labels()), false,
			`helm release web in namespace ns has an operation in progress: its last revision, 2, is pending-upgrade ("Preparing upgrade", since 2026-01-02T03:02:35Z (1m30s ago)), and gantry does not deploy over it, as helm refuses to ("another operation (install/upgrade/rollback) is in progress"). Wait until it ends (helm history web -n ns), then deploy again; if nothing runs it any more (it was killed), end it first: helm rollback web -n ns --force-conflicts (gantry applied its objects: without it, helm's server-side apply conflicts with gantry's field manager; gantry takes the fields back on its next deploy), which goes back to the last deployed revision`},
		// Nothing of gantry's in the history: a plain rollback works.
		{"helm upgrade of helm's release", helmOnly, pending(rcommon.StatusPendingUpgrade, "Preparing upgrade", nil), false,
			"end it first: helm rollback web -n ns, which goes back"},
		{"helm rollback running", nil, pending(rcommon.StatusPendingRollback, "Rollback", nil), false, "its last revision, 2, is pending-rollback"},
		{"helm install running", revision(1, rcommon.StatusUninstalled, "Uninstallation complete", nil), pending(rcommon.StatusPendingInstall, "Initial install underway", nil), false,
			"is pending-install (\"Initial install underway\", since 2026-01-02T03:02:35Z (1m30s ago)), and gantry does not deploy over it, as helm refuses to (\"another operation (install/upgrade/rollback) is in progress\"). Wait until it ends (helm history web -n ns), then deploy again; if nothing runs it any more (it was killed), end it first: helm uninstall web -n ns, which deletes whatever the killed install applied"},
		{"this component's killed deploy", nil, pending(rcommon.StatusPendingUpgrade, descDeploying, me.labels()), false, ""},
		{"an older gantry's killed deploy", nil, pending(rcommon.StatusPendingInstall, descDeploying, nil), false, ""},
		{"another component's pending deploy", nil, pending(rcommon.StatusPendingUpgrade, descDeploying, markOf("shop", "api").labels()), false, "is pending-upgrade"},
		// The deploy takes the release over from a component that left
		// the stack: its killed run is over.
		{"killed deploy of the component taken over from", nil, pending(rcommon.StatusPendingUpgrade, descDeploying, markOf("shop", "api").labels()), true, ""},
		{"another stack's pending deploy", nil, pending(rcommon.StatusPendingUpgrade, descDeploying, markOf("other", "api").labels()), true, "is pending-upgrade"},
		{"helm's upgrade on a release taken over", nil, pending(rcommon.StatusPendingUpgrade, "Preparing upgrade", markOf("shop", "api").labels()), true, "is pending-upgrade"},
		// Not pending: helm does not take it for an operation in progress.
		{"uninstalling", nil, pending(rcommon.StatusUninstalling, "Deletion in progress (or silently failed)", nil), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := deployed
			if tt.first != nil {
				first = tt.first
			}
			err := inProgress([]*rspb.Release{first, tt.last}, me, tt.takeover, "web", "ns", now)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want one with %q", err, tt.want)
			}
		})
	}
	if err := inProgress(nil, me, false, "web", "ns", now); err != nil {
		t.Errorf("no release: %v", err)
	}
}

// A revision's manifest holds the chart's templates/ objects, as helm
// stores them ("---", "# Source:" lines); what does not read as an object
// is skipped.
func TestManifestObjects(t *testing.T) {
	rel := &rspb.Release{Manifest: "---\n# Source: web/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: ns\n" +
		"---\n# Source: web/templates/crd.yaml\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.org}\n" +
		"---\n# Source: web/templates/empty.yaml\n\n---\nnot: [an object\n"}
	got := manifestObjects(rel)
	if len(got) != 2 || got[0].Kind != "ConfigMap" || got[0].Metadata.Name != "cm" || got[0].Metadata.Namespace != "ns" || got[1].APIVersion != "apiextensions.k8s.io/v1" {
		t.Errorf("manifestObjects = %+v", got)
	}
	if has := templateCRD([]*rspb.Release{{}, rel}); !has("widgets.example.org") || has("cm") || has("gadgets.example.org") {
		t.Errorf("templateCRD: widgets %v, cm %v, gadgets %v", has("widgets.example.org"), has("cm"), has("gadgets.example.org"))
	}
}

// templateCRD reads the newest revisions first, crdHistory of them, and
// only the documents that name the kind: a long history of large
// manifests without CRDs (dashboards in ConfigMaps, 2 MiB x 100
// revisions: 18.5 s when every document of every revision was parsed on
// each deploy and undeploy) costs a scan of the text.
func TestTemplateCRDReadsLittle(t *testing.T) {
	var b strings.Builder
	line := strings.Repeat("x", 200)
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "---\n# Source: c/templates/cm%d.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm%d\ndata:\n", i, i)
		for j := 0; j < 100; j++ {
			fmt.Fprintf(&b, "  k%d: %q\n", j, line)
		}
	}
	big := b.String()
	crd := "---\n# Source: c/templates/crd.yaml\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.org}\n"
	var hist []*rspb.Release
	for v := 1; v <= 100; v++ {
		m := big
		if v == 100-crdHistory { // just older than the revisions read
			m += crd
		}
		hist = append(hist, &rspb.Release{Name: "web", Version: v, Manifest: m})
	}
	start := time.Now()
	if templateCRD(hist)("widgets.example.org") {
		t.Errorf("a CRD only in revision %d, older than the newest %d, is found", 100-crdHistory, crdHistory)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("templateCRD over %d revisions of %d KiB took %s", len(hist), len(big)/1024, took)
	}
	hist[len(hist)-1].Manifest += crd
	if !templateCRD(hist)("widgets.example.org") {
		t.Error("a CRD in the newest revision is not found")
	}
}

// An undeploy of an older gantry's unmarked release, which the state
// records (so the component's own), marks the revision it updates: killed
// after its deletions, when the state records nothing any more, the retry
// still finds the release its own and removes it.
func TestUndeployMarksItsRelease(t *testing.T) {
	me := markOf("shop", "web")
	for _, hist := range [][]*rspb.Release{
		{revision(1, rcommon.StatusSuperseded, "Superseded by gantry", nil), revision(2, rcommon.StatusDeployed, "Upgrade complete", nil)},
		{revision(1, rcommon.StatusDeployed, "Install complete", nil)},
	} {
		store := storeOf(t, hist...)
		if o := ownershipOf(hist, me, true, nil); o.standing != standOwn {
			t.Fatalf("first undeploy: %+v", o)
		}
		r := &record{store: store, name: "web", hist: hist, me: me, claim: true}
		if err := r.Begin(context.Background()); err != nil { // then killed
			t.Fatal(err)
		}
		after, err := history(store, "web")
		if err != nil {
			t.Fatal(err)
		}
		last := after[len(after)-1]
		if m, ok := revisionMark(last); !ok || m != me || last.Info.Description != descUninstalling {
			t.Errorf("%d revisions: the last is %s %q, labels %v", len(hist), last.Info.Status, last.Info.Description, last.Labels)
		}
		// The retry: every object deleted and forgotten.
		if o := ownershipOf(after, me, false, nil); o.standing != standOwn {
			t.Errorf("%d revisions: the retry finds %+v: %q", len(hist), o, o.leftReason(me))
		}
	}
}

// TestUpgrades: a deploy upgrades a release that exists and is not
// uninstalled, as helm upgrade --install does, but for one never deployed
// (installed again); one whose undeploy failed or was killed was deployed.
func TestUpgrades(t *testing.T) {
	const (
		dep   = rcommon.StatusDeployed
		sup   = rcommon.StatusSuperseded
		fail  = rcommon.StatusFailed
		unin  = rcommon.StatusUninstalling
		gone  = rcommon.StatusUninstalled
		pinst = rcommon.StatusPendingInstall
	)
	rev := func(v int, st rcommon.Status, desc string) *rspb.Release { return revision(v, st, desc, nil) }
	tests := []struct {
		name string
		hist []*rspb.Release
		want bool
	}{
		{"no history (namespace deleted)", nil, false},
		{"deployed", []*rspb.Release{rev(1, dep, "Install complete")}, true},
		{"a failed upgrade after a deployed one", []*rspb.Release{rev(1, sup, ""), rev(2, fail, "gantry: apply failed")}, true},
		{"a first install that failed", []*rspb.Release{rev(1, fail, "gantry: apply failed")}, false},
		{"a first install killed", []*rspb.Release{rev(1, pinst, descDeploying)}, false},
		{"an undeploy that failed", []*rspb.Release{rev(1, fail, descUninstallFailed+"pre-delete hook failed")}, true},
		{"an undeploy killed", []*rspb.Release{rev(1, unin, descUninstalling)}, true},
		{"an undeploy killed, ended by a later run", []*rspb.Release{rev(1, fail, "gantry: interrupted while uninstalling; revision 2 was deployed after it")}, true},
		{"uninstalled with its history kept", []*rspb.Release{rev(1, sup, ""), rev(2, gone, "Uninstallation complete")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := upgrades(tt.hist); got != tt.want {
				t.Errorf("upgrades = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestUndeployFailedKeepsWhetherDeployed: an undeploy that fails leaves a
// deployed release upgradable, and a release never deployed (its first
// install failed) still installed again by the next deploy.
func TestUndeployFailedKeepsWhetherDeployed(t *testing.T) {
	for _, tt := range []struct {
		name string
		last *rspb.Release
		want bool
	}{
		{"deployed", revision(1, rcommon.StatusDeployed, "Install complete", nil), true},
		{"first install failed", revision(1, rcommon.StatusFailed, "gantry: apply failed", nil), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store := storeOf(t, tt.last)
			r := &record{store: store, name: "web", hist: []*rspb.Release{tt.last}, me: markOf("shop", "web"), claim: true}
			if err := r.Begin(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := r.Fail(context.Background(), fmt.Errorf("pre-delete hook failed")); err != nil {
				t.Fatal(err)
			}
			after, err := history(store, "web")
			if err != nil {
				t.Fatal(err)
			}
			if got := upgrades(after); got != tt.want {
				t.Errorf("upgrades after the failed undeploy = %v (%s %q), want %v", got, after[0].Info.Status, after[0].Info.Description, tt.want)
			}
		})
	}
}
