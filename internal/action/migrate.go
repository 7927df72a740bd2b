package action

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/workspace"
)

// Migrate copies a stack's state from one location to another (a file and
// a PostgreSQL database, either way), both locked meanwhile. A state at the
// destination of another stack is refused, and so is a newer one unless
// Force; the source is left as it was.
type Migrate struct {
	From, To string
	Force    bool
	Lock     state.LockOptions
}

// Migrated is what a migration did.
type Migrated struct {
	Stack      string
	Components int
	From, To   string
	// Same says the destination held this very state already.
	Same bool
	// Rekeyed is how many plugin data folders of FROM's workspace were
	// marked as TO's (workspace.RekeyOwners).
	Rekeyed int
	// Moved are the plugin data folders moved to TO's workspace, another
	// folder than FROM's (workspace.MoveOwners).
	Moved []string
	// Workspace is TO's workspace (the .gantry folder its runs use).
	Workspace string
}

// Run carries out the copy.
func (m *Migrate) Run(ctx context.Context) (*Migrated, error) {
	const consequence = "nothing was copied"
	from, fromAnchor, err := OpenState(m.From, "", "")
	if err != nil {
		return nil, err
	}
	defer from.Close()
	st, err := readStore(ctx, from)
	if err != nil {
		return nil, unreadable(consequence, err)
	}
	if st == nil {
		return nil, invalid(consequence, "no state at %s", from)
	}
	to, toAnchor, err := OpenState(m.To, "", st.Stack)
	if err != nil {
		return nil, err
	}
	defer to.Close()
	if sharesState(from, to) {
		return nil, invalid(consequence, "FROM %s and TO %s are the same state: give TO the location to copy it to", from, to)
	}
	runID := newRunID()
	// Locked in one order whichever is FROM: two migrations the opposite
	// ways at once, each holding its FROM and waiting for the other's,
	// would wait out their --lock-timeout.
	stores := []state.Store{from, to}
	if storeKey(to, toAnchor) < storeKey(from, fromAnchor) {
		stores[0], stores[1] = to, from
	}
	for _, s := range stores {
		l, err := lockStore(ctx, s, runID, "gantry state migrate", m.Lock)
		if err != nil {
			return nil, err
		}
		defer l.Release()
	}
	// Read again under the locks: a run may have ended meanwhile.
	if st, err = readStore(ctx, from); err != nil || st == nil {
		if state.IsUnavailable(err) {
			return nil, err
		}
		return nil, invalid(consequence, "the state at %s changed while it was being locked: %v", from, err)
	}
	there, err := readStore(ctx, to)
	if err != nil {
		return nil, unreadable(consequence, err)
	}
	out := &Migrated{Stack: st.Stack, Components: len(st.Components), From: from.String(), To: to.String()}
	if there != nil && there.Stack != st.Stack {
		return nil, invalid(consequence, "%s holds the state of stack %q, not %q", to, there.Stack, st.Stack)
	}
	b, err := state.FullBatch(st)
	if err != nil {
		return nil, err
	}
	if there != nil {
		if same, err := state.Encode(there); err == nil && string(same) == string(b.Snapshot) {
			// Its plugin data is looked after again: a migration whose
			// marking or move failed is mended by running it again.
			out.Same = true
			return out, keepPluginData(ctx, out, st, from, fromAnchor, to, toAnchor)
		}
		// States record when they were updated to the second: one updated
		// in the same second as the source may be the newer one, and is
		// never overwritten unasked either.
		switch {
		case m.Force:
		case there.DeploymentID != "" && st.DeploymentID != "" && there.DeploymentID != st.DeploymentID && liveCount(there) == 0:
			// Another deployment with nothing deployed loses nothing,
			// however new it is.
		case there.DeploymentID != "" && st.DeploymentID != "" && there.DeploymentID != st.DeploymentID:
			// Another deployment of the stack (a team's database state, a
			// fresh one from another checkout): copying over it forgets
			// what it deployed, however old it is.
			return nil, invalid(consequence, "%s holds another deployment of stack %q (hub.deploymentId %s, %s; %s's is %s): copying over it would forget what it deployed%s; --force overwrites it",
				to, st.Stack, there.DeploymentID, deployedCount(there), from, st.DeploymentID, lostComponents(there))
		case there.Updated.After(st.Updated):
			return nil, invalid(consequence, "%s holds a newer state of stack %q (updated %s; %s was updated %s): --force overwrites it",
				to, st.Stack, there.Updated.Format(time.RFC3339), from, st.Updated.Format(time.RFC3339))
		case there.Updated.Equal(st.Updated):
			return nil, invalid(consequence, "%s holds another state of stack %q updated in the same second as %s's (%s), which may be the newer: --force overwrites it",
				to, st.Stack, from, st.Updated.Format(time.RFC3339))
		}
	}
	w, err := to.Writer(ctx)
	if err != nil {
		return nil, fmt.Errorf("write the state to %s: %w", to, err)
	}
	if err := w.Write(ctx, b); err != nil {
		return nil, err
	}
	if err := w.Finish(ctx, func() (state.Batch, error) { return b, nil }, false); err != nil {
		return nil, err
	}
	if err := keepPluginData(ctx, out, st, from, fromAnchor, to, toAnchor); err != nil {
		return nil, err
	}
	return out, nil
}

// keepPluginData gives the deployment's plugin data, marked with FROM, to
// TO: marked with TO, so that a state made anew at FROM does not take it
// for its predecessor's; and moved into TO's workspace when that is
// another folder (a state file elsewhere), where runs on TO look for it —
// left behind, terraform would start from nothing there.
func keepPluginData(ctx context.Context, out *Migrated, st *state.State, from state.Store, fromAnchor string, to state.Store, toAnchor string) error {
	if st.DeploymentID == "" {
		return nil
	}
	owner := func(s state.Store, anchor string) workspace.Owner {
		return workspace.Owner{ID: st.DeploymentID, Key: storeKey(s, anchor), Location: state.Redact(s.String())}
	}
	src, dst := workspace.For(fromAnchor), workspace.For(toAnchor)
	out.Workspace = dst.Root
	// Moved only between two state files in two folders: a database's
	// runs keep their plugin data next to the manifest, which migrate
	// does not know; one folder spelt two ways (a link) is one workspace.
	_, fromFile := from.(*state.FileStore)
	_, toFile := to.(*state.FileStore)
	if !fromFile || !toFile || samePath(src.Root, dst.Root) {
		n, err := src.RekeyOwners(ctx, owner(from, fromAnchor), owner(to, toAnchor))
		if err != nil {
			return fmt.Errorf("the state was copied, but its plugin data folders could not be marked as %s's (run the migration again): %w", to, err)
		}
		out.Rekeyed = n
		return nil
	}
	moved, err := src.MoveOwners(ctx, dst, owner(from, fromAnchor), owner(to, toAnchor))
	out.Moved = moved
	if err == nil {
		// What was moved by hand after a move that failed.
		out.Rekeyed, err = dst.RekeyOwners(ctx, owner(from, fromAnchor), owner(to, toAnchor))
	}
	if err != nil {
		return fmt.Errorf("the state was copied, but not all its plugin data could be moved to %s, where runs on %s look for it (move what is left by hand, then run the migration again to mark it): %w", filepath.Join(dst.Root, "state"), to, err)
	}
	return nil
}

// live reports whether a component's status says it may have left
// something in the world: deployed, or a deploy that failed or was cut.
func live(c *state.Component) bool {
	return c != nil && (c.Status == state.StatusDeployed || c.Status == state.StatusIncomplete || c.Status == state.StatusFailed)
}

// liveCount is how many components a state records live.
func liveCount(st *state.State) int {
	n := 0
	for _, c := range st.Components {
		if live(c) {
			n++
		}
	}
	return n
}

// deployedCount says how many components a state records live.
func deployedCount(st *state.State) string {
	if n := liveCount(st); n != 1 {
		return fmt.Sprintf("%d components deployed or partly deployed", n)
	}
	return "1 component deployed or partly deployed"
}

// lostComponents names, for a message, the components there records live:
// what a copy of another deployment over there forgets, those st has as
// well among them (two deployments' are two sets of resources).
func lostComponents(there *state.State) string {
	var lost []string
	for _, name := range there.ComponentOrder() {
		if live(there.Components[name]) {
			lost = append(lost, name)
		}
	}
	switch {
	case len(lost) == 0:
		return ""
	case len(lost) > 10:
		return fmt.Sprintf(" (%s and %d more)", strings.Join(lost[:10], ", "), len(lost)-10)
	}
	return " (" + strings.Join(lost, ", ") + ")"
}

// sharesState reports whether two stores (or -s lists of them) have a
// state in common: locking both would find the second lock held by this
// very command.
func sharesState(a, b state.Store) bool {
	for _, x := range listed(a) {
		for _, y := range listed(b) {
			if sameStore(x, y) {
				return true
			}
		}
	}
	return false
}

// listed is the stores of an -s list, or the store alone.
func listed(s state.Store) []state.Store {
	if m, ok := s.(state.Mirror); ok {
		return m
	}
	return []state.Store{s}
}

// readStore reads and decodes a store's state; nil when there is none.
func readStore(ctx context.Context, s state.Store) (*state.State, error) {
	files, err := s.Read(ctx)
	if err != nil {
		return nil, err
	}
	return files.Decode(s.String())
}
