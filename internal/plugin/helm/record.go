package helm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	release "helm.sh/helm/v4/pkg/release"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// maxHistory is how many revisions of a release are kept, the one a deploy
// writes included, as helm upgrade's --history-max and werf keep by
// default: each revision is a Secret holding the rendered manifest and the
// values, and a stack deployed on every commit would pile them up.
const maxHistory = 10

// releases is Helm's storage of a namespace's releases: Secrets of type
// helm.sh/release.v1, which helm list and helm history read. Writing a
// revision removes the oldest beyond maxHistory, never the last deployed.
func releases(rc *rest.Config, namespace string) (*storage.Storage, error) {
	cs, err := k8s.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", rc.Host, err)
	}
	s := storage.Init(driver.NewSecrets(cs.CoreV1().Secrets(namespace)))
	s.MaxHistory = maxHistory
	return s, nil
}

// history is a release's revisions, oldest first; none when it has none.
func history(s *storage.Storage, name string) ([]*rspb.Release, error) {
	list, err := s.History(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the history of release %s: %w", name, err)
	}
	out := make([]*rspb.Release, 0, len(list))
	for _, r := range list {
		if v := asRelease(r); v != nil {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b *rspb.Release) int { return a.Version - b.Version })
	return out, nil
}

// asRelease is a release the storage returned as a v1 release; nil for
// another kind.
func asRelease(r release.Releaser) *rspb.Release {
	switch v := r.(type) {
	case *rspb.Release:
		return v
	case rspb.Release:
		return &v
	}
	return nil
}

// upgrades reports whether a deploy upgrades the release whose history
// this is, as helm upgrade --install decides — the release exists and is
// not uninstalled — but for a release that was never deployed (its first
// install failed, or was killed), which is installed again, with its
// install hooks. A release whose undeploy failed or was killed was
// deployed: it is upgraded.
func upgrades(hist []*rspb.Release) bool {
	last := lastOf(hist)
	if last == nil || last.Info == nil || last.Info.Status == rcommon.StatusUninstalled {
		return false
	}
	return slices.ContainsFunc(hist, wasDeployed)
}

// wasDeployed reports whether a revision was deployed once: deployed,
// superseded by a later one, or the one an undeploy began with (its
// status then uninstalling, or failed by an undeploy that failed or was
// killed).
func wasDeployed(r *rspb.Release) bool {
	if r.Info == nil {
		return false
	}
	switch r.Info.Status {
	case rcommon.StatusDeployed, rcommon.StatusSuperseded, rcommon.StatusUninstalling:
		return true
	case rcommon.StatusFailed:
		return strings.HasPrefix(r.Info.Description, descUninstallFailed) ||
			strings.HasPrefix(r.Info.Description, "gantry: interrupted while "+string(rcommon.StatusUninstalling))
	}
	return false
}

// deployedIn reports whether a history holds a deployed revision.
func deployedIn(hist []*rspb.Release) bool {
	for _, r := range hist {
		if r.Info != nil && r.Info.Status == rcommon.StatusDeployed {
			return true
		}
	}
	return false
}

// record is the Helm release of one action, kept in Helm's storage as
// helm install, helm upgrade and helm uninstall keep it: a deploy is a new
// revision, pending while the stages run, deployed when they all did (the
// revision before it superseded, and those a killed run left pending or
// uninstalling failed), failed when one failed; an undeploy
// marks the release uninstalling and, when everything is deleted, removes
// its history — when the release is the instance's (owner.go): another's
// is left as it is.
type record struct {
	store *storage.Storage
	// name is the release's name.
	name string
	// rel is the deploy's new revision; hist the revisions before it.
	rel  *rspb.Release
	hist []*rspb.Release
	// left says why an undeploy leaves the release and its history in
	// place (it is not the instance's: ownership.leftReason); hist is
	// then empty.
	left string
	// me is the instance's mark: the revisions its killed runs left
	// pending or uninstalling are its to end (interrupted).
	me mark
	// claim says the release is the instance's (a deploy's, or an
	// undeploy's that does not leave it): every revision the record
	// updates gets its mark, so that an older gantry's unmarked release
	// stays the instance's after a run killed half-way (its state may
	// then record nothing).
	claim bool
	// takeover says the deploy takes the release over from another
	// component of the stack that has left it: its killed runs are the
	// instance's to end too (interrupted).
	takeover bool
	// undeploysDeployed says the revision an undeploy began with was
	// deployed: one it fails to uninstall stays so (descUninstallFailed),
	// and the next deploy upgrades it; a release never deployed (its first
	// install failed) is installed again, whatever its undeploy did.
	undeploysDeployed bool
}

func (r *record) Begin(ctx context.Context) error {
	if r.rel == nil { // undeploy
		if last := lastOf(r.hist); last != nil {
			r.undeploysDeployed = wasDeployed(last)
			last.SetStatus(rcommon.StatusUninstalling, descUninstalling)
			return r.update(last)
		}
		return nil
	}
	if err := r.store.Create(r.rel); err != nil {
		return fmt.Errorf("record release %s revision %d: %w", r.rel.Name, r.rel.Version, err)
	}
	return nil
}

func (r *record) Finish(_ context.Context, out io.Writer) error {
	if r.rel == nil {
		if r.left != "" {
			fmt.Fprintf(out, "helm release %s left in place, with its history: %s\n", r.name, r.left)
			return nil
		}
		for _, h := range r.hist {
			if _, err := r.store.Delete(h.Name, h.Version); err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
				return fmt.Errorf("delete revision %d of release %s: %w", h.Version, h.Name, err)
			}
		}
		if last := lastOf(r.hist); last != nil {
			fmt.Fprintf(out, "release %s uninstalled (%d revisions removed from helm's history)\n", last.Name, len(r.hist))
		} else {
			fmt.Fprintln(out, "no helm release to remove")
		}
		return nil
	}
	// Each revision is read again before it is updated: helm may have
	// changed it since Open (a helm upgrade that was pending then, and
	// has finished), and what gantry read then is not written back.
	for _, h := range r.hist {
		if h.Info == nil {
			continue
		}
		st := h.Info.Status
		var to rcommon.Status
		var desc string
		switch {
		case st == rcommon.StatusDeployed:
			to, desc = rcommon.StatusSuperseded, "Superseded by gantry"
		case interrupted(h, r.me, r.takeover):
			// A run of this instance killed mid-way left it so; helm
			// would take it for an operation in progress for ever (helm
			// history, and helm upgrade while it is the last). Another's
			// pending revision is left to whoever runs it.
			to, desc = rcommon.StatusFailed, fmt.Sprintf("gantry: interrupted while %s; revision %d was deployed after it", st, r.rel.Version)
		default:
			continue
		}
		cur, err := r.store.Get(h.Name, h.Version)
		if errors.Is(err, driver.ErrReleaseNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read release %s revision %d: %w", h.Name, h.Version, err)
		}
		now := asRelease(cur)
		if now == nil || now.Info == nil || now.Info.Status != st {
			continue // changed since Open: not gantry's to change
		}
		now.SetStatus(to, desc)
		if err := r.update(now); err != nil {
			return err
		}
	}
	desc := "Install complete"
	if r.rel.Info.Status == rcommon.StatusPendingUpgrade {
		desc = "Upgrade complete"
	}
	r.rel.Info.LastDeployed = time.Now()
	r.rel.SetStatus(rcommon.StatusDeployed, desc)
	if err := r.update(r.rel); err != nil {
		return err
	}
	fmt.Fprintf(out, "release %s revision %d deployed in namespace %s\n", r.rel.Name, r.rel.Version, r.rel.Namespace)
	return nil
}

func (r *record) Fail(_ context.Context, err error) error {
	rel := r.rel
	if rel == nil {
		rel = lastOf(r.hist)
	}
	if rel == nil {
		return nil
	}
	first, _, _ := strings.Cut(err.Error(), "\n")
	desc := "gantry: " + first
	if r.rel == nil && r.undeploysDeployed {
		desc = descUninstallFailed + first // still deployed, as far as a deploy goes (wasDeployed)
	}
	rel.SetStatus(rcommon.StatusFailed, desc)
	return r.update(rel)
}

func (r *record) update(rel *rspb.Release) error {
	if r.claim {
		labels := maps.Clone(rel.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		maps.Copy(labels, r.me.labels())
		rel.Labels = labels
	}
	if err := r.store.Update(rel); err != nil {
		return fmt.Errorf("record release %s revision %d as %s: %w", rel.Name, rel.Version, rel.Info.Status, err)
	}
	return nil
}

func lastOf(hist []*rspb.Release) *rspb.Release {
	if len(hist) == 0 {
		return nil
	}
	return hist[len(hist)-1]
}

// manifestObject is an object of a revision's manifest, as far as gantry
// reads it: which object it is.
type manifestObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// manifestObjects are the objects of a revision's manifest (its chart's
// templates/, hooks and crds/ left out, as helm stores it), in its order;
// documents that do not read as an object are skipped.
func manifestObjects(rel *rspb.Release) []manifestObject {
	docs := releaseutil.SplitManifests(rel.Manifest)
	keys := slices.Collect(maps.Keys(docs))
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	var out []manifestObject
	for _, k := range keys {
		var o manifestObject
		if err := yaml.Unmarshal([]byte(docs[k]), &o); err != nil || o.Kind == "" || o.Metadata.Name == "" {
			continue
		}
		out = append(out, o)
	}
	return out
}

// crdHistory is how many revisions of a release, the newest first,
// templateCRD reads at most: proof that an old revision's templates made
// a CRD is looked for in the recent ones only, so that a long history of
// large manifests does not slow every deploy (gantry keeps every
// revision). A CRD found in none is left in place, not deleted.
const crdHistory = 50

// templateCRD reports whether a revision's manifest holds the CRD of the
// name (kubernetes.HelmRelease.TemplateCRD): it reads the newest
// revisions first (crdHistory of them) and stops at the first that does.
// Only the documents that name the kind are parsed.
func templateCRD(hist []*rspb.Release) func(name string) bool {
	return func(name string) bool {
		for i := len(hist) - 1; i >= 0 && i >= len(hist)-crdHistory; i-- {
			if !strings.Contains(hist[i].Manifest, crdKind) {
				continue
			}
			for _, doc := range releaseutil.SplitManifests(hist[i].Manifest) {
				if !strings.Contains(doc, crdKind) {
					continue
				}
				var o manifestObject
				if yaml.Unmarshal([]byte(doc), &o) == nil && o.Kind == crdKind && strings.HasPrefix(o.APIVersion, "apiextensions.k8s.io/") && o.Metadata.Name == name {
					return true
				}
			}
		}
		return false
	}
}

// crdKind is a CRD's kind.
const crdKind = "CustomResourceDefinition"
