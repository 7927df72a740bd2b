package helm

import (
	"bytes"
	"context"
	"strings"
	"testing"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
)

// A deploy that finishes marks the revisions a killed run left pending or
// uninstalling as failed, saying so, and supersedes the deployed one:
// helm history shows no operation in progress any more.
func TestFinishEndsInterruptedRevisions(t *testing.T) {
	store := storage.Init(driver.NewMemory())
	statuses := []rcommon.Status{rcommon.StatusSuperseded, rcommon.StatusDeployed, rcommon.StatusFailed,
		rcommon.StatusPendingUpgrade, rcommon.StatusUninstalling, rcommon.StatusPendingInstall}
	for i, st := range statuses {
		rel := &rspb.Release{Name: "web", Namespace: "ns", Version: i + 1, Info: &rspb.Info{Status: st, Description: "was " + st.String()}}
		if err := store.Create(rel); err != nil {
			t.Fatal(err)
		}
	}
	hist, err := history(store, "web")
	if err != nil {
		t.Fatal(err)
	}
	next := &rspb.Release{Name: "web", Namespace: "ns", Version: len(statuses) + 1, Info: &rspb.Info{Status: rcommon.StatusPendingUpgrade}}
	r := &record{store: store, name: "web", hist: hist, rel: next}
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
		{rcommon.StatusSuperseded, "Superseded by gantry"},
		{rcommon.StatusFailed, "was failed"},
		{rcommon.StatusFailed, "gantry: interrupted while pending-upgrade; revision 7 was deployed after it"},
		{rcommon.StatusFailed, "gantry: interrupted while uninstalling; revision 7 was deployed after it"},
		{rcommon.StatusFailed, "gantry: interrupted while pending-install; revision 7 was deployed after it"},
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
	if !strings.Contains(out.String(), "release web revision 7 deployed") {
		t.Errorf("output %q", out.String())
	}
}
