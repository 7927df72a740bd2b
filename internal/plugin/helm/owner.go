package helm

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"

	"github.com/gantry-dev/gantry/internal/plugin/kubernetes"
)

// Who deployed a release. Every revision gantry writes carries the stack
// and component that deployed it, as labels of the revision's Secret in
// Helm's storage (Release.Labels: helm keeps them, and helm upgrade copies
// them to its next revision). A release is one component's, as an object
// is: another stack's or component's is refused, not taken over — two
// components deploying one release would each upgrade it to their own
// chart, and the first to undeploy would erase the other's history.
const (
	labelStack     = "gantry.dev/stack"
	labelComponent = "gantry.dev/component"
)

// mark is a stack and a component as a revision's labels write them
// (labelValue).
type mark struct{ stack, component string }

// markOf is the mark of the instance of a component of a stack.
func markOf(stack, component string) mark {
	return mark{labelValue(stack), labelValue(component)}
}

// labels are the revision labels that write the mark.
func (m mark) labels() map[string]string {
	return map[string]string{labelStack: m.stack, labelComponent: m.component}
}

// describe names the marked component for messages, from the point of
// view of the component me. A name that is not a label value is shown as
// its label value (labelValue: what it has of one, and a hash).
func (m mark) describe(me mark) string {
	if m.stack == me.stack {
		return "component " + m.component + " of this stack"
	}
	return "component " + m.component + " of stack " + m.stack
}

// revisionMark reads a revision's mark; false for a revision without one.
// A revision with only one of the two labels (a kubectl label that named
// one) has none: it names no component.
func revisionMark(r *rspb.Release) (mark, bool) {
	s, hasStack := r.Labels[labelStack]
	c, hasComponent := r.Labels[labelComponent]
	return mark{s, c}, hasStack && hasComponent
}

// marked reports whether a revision of a history carries a mark.
func marked(hist []*rspb.Release) bool {
	return slices.ContainsFunc(hist, func(r *rspb.Release) bool {
		_, ok := revisionMark(r)
		return ok
	})
}

// labelValue is a name as a label value: the name itself when it is one
// (a component's name mostly is: letters, digits, _ . -); otherwise what
// it has of one, followed by a hash of the whole name that tells it
// apart. A name that ends as such a hash does ("-" and 12 hex digits) is
// hashed too: "My-Stack-9fa2b74d4403" would otherwise write the same value
// as "My Stack", and each stack would take the other's releases for its
// own.
func labelValue(s string) string {
	if len(content.IsLabelValue(s)) == 0 && !hashedForm.MatchString(s) {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	hash := hex.EncodeToString(sum[:])[:12]
	keep := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '-'
	}, s)
	keep = strings.Trim(keep, "-_.")
	if len(keep) > content.LabelValueMaxLength-len(hash)-1 {
		keep = strings.TrimRight(keep[:content.LabelValueMaxLength-len(hash)-1], "-_.")
	}
	if keep == "" {
		return hash
	}
	return keep + "-" + hash
}

// hashedForm matches what labelValue makes of a name that is not a label
// value: it ends with a hash of 12 hex digits, alone or after "-".
var hashedForm = regexp.MustCompile(`(^|-)[0-9a-f]{12}$`)

// standing is whose a release is, to the instance that deploys it.
type standing int

const (
	// standNone: the release has no revision; a deploy installs it.
	standNone standing = iota
	// standOwn: the instance's own: its component's mark is on the last
	// marked revision, or no revision is marked and the component's state
	// records the instance (an older gantry wrote it without a mark).
	standOwn
	// standHelm: no revision has gantry's mark or was written by gantry:
	// helm installed the release; a deploy adopts it.
	standHelm
	// standOther: another stack's or component's mark is on the last
	// marked revision.
	standOther
	// standUnmarked: an older gantry wrote the release, without a mark,
	// and the component's state does not record the instance: it may be
	// another stack's.
	standUnmarked
)

// ownership is whose a release is: its standing, and for standOther the
// mark of the component whose it is.
type ownership struct {
	standing standing
	by       mark
	// byObjects says the standing was read from the gantry annotations
	// of the release's objects, not from a revision's mark; byName is then
	// the stack and component they name, as written (for messages).
	byObjects bool
	byName    mark
	// gantryWrote says, for byObjects, that the release's history shows
	// gantry wrote it (writtenByGantry); without that, helm may have
	// installed it and the named component adopted its objects.
	gantryWrote bool
}

// owner names the component whose the release is for messages, from the
// point of view of the component me: by its names when the objects'
// annotations gave them, else as its mark writes them.
func (o ownership) owner(me mark) string {
	if o.byObjects {
		if o.by.stack == me.stack {
			return "component " + o.byName.component + " of this stack"
		}
		return "component " + o.byName.component + " of stack " + o.byName.stack
	}
	return o.by.describe(me)
}

// evidence says where a standOther's mark was read, for messages.
func (o ownership) evidence() string {
	switch {
	case o.byObjects && o.gantryWrote:
		return "the gantry.dev/stack and gantry.dev/component annotations of its objects: an older gantry, which did not mark releases, deployed it"
	case o.byObjects:
		return "the gantry.dev/stack and gantry.dev/component annotations of its objects: an older gantry, which did not mark releases, deployed it, or helm installed it and that component adopted its objects"
	}
	return "labels " + labelStack + ", " + labelComponent + " of its revisions in helm's storage"
}

// ownershipOf reads whose a release is from its revisions (oldest first),
// for the instance me; recorded says whether the component's state records
// the instance (it deployed, or began to); live are the stacks and
// components the gantry annotations on the objects of the release's
// manifest in the cluster name, as written (liveNames), read when no
// revision is marked: an older gantry annotated the objects it applied,
// not the revisions it wrote.
func ownershipOf(hist []*rspb.Release, me mark, recorded bool, live []mark) ownership {
	if len(hist) == 0 {
		return ownership{standing: standNone}
	}
	for i := len(hist) - 1; i >= 0; i-- {
		if m, ok := revisionMark(hist[i]); ok {
			if m == me {
				return ownership{standing: standOwn}
			}
			return ownership{standing: standOther, by: m}
		}
	}
	if recorded {
		return ownership{standing: standOwn}
	}
	live = slices.Compact(slices.SortedFunc(slices.Values(live), func(a, b mark) int {
		return cmp.Or(strings.Compare(a.stack, b.stack), strings.Compare(a.component, b.component))
	}))
	if len(live) == 1 {
		if by := markOf(live[0].stack, live[0].component); by != me {
			return ownership{standing: standOther, by: by, byObjects: true, byName: live[0], gantryWrote: writtenByGantry(hist)}
		}
		return ownership{standing: standOwn, byObjects: true, byName: live[0]}
	}
	switch {
	case len(live) > 1, writtenByGantry(hist):
		// Objects of several components: which one deployed the
		// release is not known.
		return ownership{standing: standUnmarked}
	}
	return ownership{standing: standHelm}
}

// liveChecks is how many objects of a release's manifest liveMarks reads
// at most: an older gantry annotated every object it applied.
const liveChecks = 5

// liveNames reads the stacks and components the gantry annotations on
// the first objects (liveChecks) of the manifest of the release's last
// revision that has one name, as written; objects without gantry's
// annotations, and those gone, give none.
func liveNames(ctx context.Context, cl *kubernetes.Cluster, hist []*rspb.Release) ([]mark, error) {
	var objs []manifestObject
	for i := len(hist) - 1; i >= 0 && len(objs) == 0; i-- {
		objs = manifestObjects(hist[i])
	}
	var out []mark
	for _, o := range objs[:min(len(objs), liveChecks)] {
		stack, component, ok, err := cl.GantryMark(ctx, o.APIVersion, o.Kind, o.Metadata.Namespace, o.Metadata.Name)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, mark{stack, component})
		}
	}
	return out, nil
}

// writtenByGantry reports whether a revision of an unmarked history says
// an older gantry wrote it: its descriptions "Deploying with gantry",
// "Superseded by gantry", "gantry: <why it failed>". (Its deployed
// revisions say "Install complete" or "Upgrade complete", as helm's do.)
func writtenByGantry(hist []*rspb.Release) bool {
	for _, r := range hist {
		if r.Info != nil && strings.Contains(strings.ToLower(r.Info.Description), "gantry") {
			return true
		}
	}
	return false
}

// Descriptions of the revisions a gantry run writes first: a revision
// still pending or uninstalling with one of them is a run's that was
// killed (helm's own runs write others: "Preparing upgrade", "Deletion in
// progress (or silently failed)"…).
const (
	descDeploying    = "Deploying with gantry"
	descUninstalling = "Uninstalling with gantry"
	// descUninstallFailed begins the description of a revision an
	// undeploy failed to uninstall.
	descUninstallFailed = "gantry: uninstall failed: "
)

// interrupted reports whether a revision is pending or uninstalling
// because a gantry run of the instance me was killed: gantry wrote it
// (its description) for me (its mark, or none: an older gantry's, on a
// release the instance may deploy). takeover says the deploy takes the
// release over from another component of its stack, one that has left
// the stack (ownership.shared): that component's killed runs are then
// the instance's to end too, as nothing will ever end them. Such a
// revision is not an operation in progress; any other pending one may be.
func interrupted(r *rspb.Release, me mark, takeover bool) bool {
	if r.Info == nil || !r.Info.Status.IsPending() && r.Info.Status != rcommon.StatusUninstalling {
		return false
	}
	if r.Info.Description != descDeploying && r.Info.Description != descUninstalling {
		return false
	}
	m, marked := revisionMark(r)
	return !marked || m == me || takeover && m.stack == me.stack
}

// inProgress is the error of a deploy of a release whose last revision is
// pending and not a killed gantry run's (interrupted): another operation
// (helm install, upgrade or rollback) may be running on it, and helm
// refuses to start one then too. nil when there is none.
func inProgress(hist []*rspb.Release, me mark, takeover bool, release, namespace string, now time.Time) error {
	last := lastOf(hist)
	if last == nil || last.Info == nil || !last.Info.Status.IsPending() || interrupted(last, me, takeover) {
		return nil
	}
	since := ""
	if t := last.Info.LastDeployed; !t.IsZero() {
		since = fmt.Sprintf(", since %s (%s ago)", t.UTC().Format(time.RFC3339), now.Sub(t).Round(time.Second))
	}
	return fmt.Errorf("helm release %s in namespace %s has an operation in progress: its last revision, %d, is %s (%q%s), and gantry does not deploy over it, as helm refuses to (\"another operation (install/upgrade/rollback) is in progress\"). Wait until it ends (helm history %s -n %s), then deploy again; if nothing runs it any more (it was killed), end it first: %s",
		release, namespace, last.Version, last.Info.Status, last.Info.Description, since, release, namespace, wayOut(hist, release, namespace))
}

// wayOut is how a user ends a killed helm operation that left a release's
// last revision pending. A rollback applies server-side as the revision
// it goes back to was applied; objects gantry applied are managed by
// gantry's field manager, and helm's apply conflicts with it unless told
// to take the fields over (gantry takes them back on its next deploy: it
// applies with force). An install's uninstall deletes what the killed
// install applied.
func wayOut(hist []*rspb.Release, release, namespace string) string {
	if !deployedIn(hist) {
		return fmt.Sprintf("helm uninstall %s -n %s, which deletes whatever the killed install applied", release, namespace)
	}
	force := ""
	if marked(hist) || writtenByGantry(hist) {
		force = " --force-conflicts (gantry applied its objects: without it, helm's server-side apply conflicts with gantry's field manager; gantry takes the fields back on its next deploy)"
	}
	return fmt.Sprintf("helm rollback %s -n %s%s, which goes back to the last deployed revision", release, namespace, force)
}

// refusal is the error of a deploy of a release that is not the
// instance's to deploy; nil when it is (its own, helm's, new, or another
// component's of its stack: takenFrom).
func (o ownership) refusal(release, namespace string, me mark) error {
	switch {
	case o.standing == standOther && o.by.stack != me.stack:
		return fmt.Errorf("helm release %s in namespace %s belongs to %s (%s); gantry does not take over another stack's release: undeploy it there, or give this component another release name (the config's release, or COMPONENT_NAME). If it is this component's now (that stack no longer deploys it), mark it: %s",
			release, namespace, o.owner(me), o.evidence(), labelCommand(release, namespace, me, true))
	case o.standing == standUnmarked:
		return fmt.Errorf("helm release %s in namespace %s was deployed by a gantry that did not mark which stack and component it belongs to, and this component's state does not record it: it may be another stack's, so gantry does not take it over. If it is this component's, mark it: %s; else give this component another release name (the config's release, or COMPONENT_NAME)",
			release, namespace, labelCommand(release, namespace, me, false))
	}
	return nil
}

// shared is the error of a deploy of a release that another component of
// the instance's stack deployed last and that stays in the stack
// (staying, asked only then: the manifest's components the run does not
// undeploy): the two would take the release from each other on every
// deploy, and the
// first undeployed would delete the other's objects and history. nil when
// the release is not such a component's: a renamed component, or a
// release moved from a component that is gone or being undeployed, takes
// it over (takenFrom).
func (o ownership) shared(release, namespace, component string, me mark, staying func() []string) error {
	if o.takenFrom(me) == "" {
		return nil
	}
	for _, c := range staying() {
		if labelValue(c) == o.by.component {
			return fmt.Errorf("helm release %s in namespace %s is deployed by %s, which is still in the stack, and component %s declares it too: two components cannot deploy one release (each deploy would upgrade it to its own chart, and undeploying either would delete the other's objects and history). Give one of them another release name (the config's release, or COMPONENT_NAME) or namespace, or remove one from the stack",
				release, namespace, o.owner(me), component)
		}
	}
	return nil
}

// takenFrom says, for a deploy of a release another component of the
// instance's stack deployed last, which one: the deploy takes it over, as
// it takes over that component's objects (the component that deploys a
// release last owns it; a component renamed, or a release moved between
// components, deploys). "" for any other release.
func (o ownership) takenFrom(me mark) string {
	if o.standing != standOther || o.by.stack != me.stack {
		return ""
	}
	return o.owner(me)
}

// labelCommand is the kubectl command that marks a release's revisions
// as the instance me's; overwrite replaces another's mark.
func labelCommand(release, namespace string, me mark, overwrite bool) string {
	flag := ""
	if overwrite {
		flag = " --overwrite"
	}
	return fmt.Sprintf("kubectl label%s secret -n %s -l owner=helm,name=%s %s=%s %s=%s",
		flag, namespace, release, labelStack, me.stack, labelComponent, me.component)
}

// leftReason says why an undeploy leaves a release and its history in
// place: it is not the instance's; "" when it is (or there is none).
func (o ownership) leftReason(me mark) string {
	switch o.standing {
	case standOther:
		return "it belongs to " + o.owner(me)
	case standUnmarked:
		return "an older gantry deployed it without marking for which stack and component, and this component's state does not record it"
	case standHelm:
		return "helm installed it, and this component never deployed it"
	}
	return ""
}
