package params

import (
	"slices"
	"sort"
	"sync"
)

// OutputIndex holds the outputs of a stack's components as they become known —
// from the state, then from each component as it finishes — and resolves plain
// output names deterministically: among the components before the asking one in
// deploy order, the latest that declares the name wins.
type OutputIndex struct {
	mu      sync.RWMutex
	pos     map[string]int               // component -> position in deploy order
	comps   []string                     // by position
	byName  map[string][]int             // declared plain output -> sorted positions
	values  map[string]map[string]string // component -> output -> value, once known
	secrets map[string]bool              // component:output
	kinds   map[string]string            // component -> its meta.kind
	// visible tells whether a producer's outputs can be seen by the asking
	// component: only components that finish before it starts.
	visible func(producer, asking string) bool
}

// SetVisibility restricts plain output names to producers for which visible
// returns true (the asking component's ancestors in the graph).
func (x *OutputIndex) SetVisibility(visible func(producer, asking string) bool) {
	x.visible = visible
}

// NewOutputIndex returns an index for components in deploy order.
func NewOutputIndex(order []string) *OutputIndex {
	x := &OutputIndex{
		pos:     make(map[string]int, len(order)),
		comps:   order,
		byName:  map[string][]int{},
		values:  map[string]map[string]string{},
		secrets: map[string]bool{},
		kinds:   map[string]string{},
	}
	for i, c := range order {
		x.pos[c] = i
	}
	return x
}

// Declare records the outputs a component declares; only declared outputs are
// visible by their plain name.
func (x *OutputIndex) Declare(comp string, names []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	p, ok := x.pos[comp]
	if !ok {
		return
	}
	for _, n := range names {
		l := x.byName[n]
		i := sort.SearchInts(l, p)
		if i < len(l) && l[i] == p {
			continue
		}
		l = append(l, 0)
		copy(l[i+1:], l[i:])
		l[i] = p
		x.byName[n] = l
	}
}

// declared returns the plain output names some component declares, for
// suggestions.
func (x *OutputIndex) declared() []string {
	if x == nil {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	names := make([]string, 0, len(x.byName))
	for n := range x.byName {
		names = append(names, n)
	}
	slices.Sort(names) // the same suggestion among equally near ones
	return names
}

// SetKind records a component's kind (its meta.kind). As in the Hub CLI, a
// component does not see the outputs of the components of its own kind:
// neither by their plain names nor qualified. Several instances of one
// component (stack entries with the same source) have the same kind, so one
// never reads another's outputs.
func (x *OutputIndex) SetKind(comp, kind string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.kinds[comp] = kind
}

// Kind returns the kind recorded for comp.
func (x *OutputIndex) Kind(comp string) string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.kinds[comp]
}

// hidden reports whether the outputs of producer are hidden from a component
// of kind asking.
func (x *OutputIndex) hidden(producer, asking string) bool {
	if asking == "" {
		return false
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.kinds[producer] == asking
}

// Set replaces the known outputs of a component; secret names the ones to mask.
func (x *OutputIndex) Set(comp string, values map[string]string, secret []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.values[comp] = values
	for _, s := range secret {
		x.secrets[comp+":"+s] = true
	}
}

// Without returns an index that knows what x knows but the outputs of the
// components gone says: a stack's outputs after an undeploy of some of its
// components are worked out without theirs.
func (x *OutputIndex) Without(gone func(comp string) bool) *OutputIndex {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := &OutputIndex{pos: x.pos, comps: x.comps, byName: x.byName, kinds: x.kinds, visible: x.visible,
		values: make(map[string]map[string]string, len(x.values)), secrets: x.secrets}
	for c, v := range x.values {
		if !gone(c) {
			out.values[c] = v
		}
	}
	return out
}

// Known reports whether the outputs of comp are known.
func (x *OutputIndex) Known(comp string) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	_, ok := x.values[comp]
	return ok
}

// Values returns the known outputs of comp (nil when unknown).
func (x *OutputIndex) Values(comp string) map[string]string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.values[comp]
}

// IsSecret reports whether comp's output name is secret.
func (x *OutputIndex) IsSecret(comp, name string) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.secrets[comp+":"+name]
}

// outputResult is what a lookup of an output found.
type outputResult struct {
	comp    string
	value   string
	found   bool // some component has (or declares) the output
	pending bool // it is declared but its value is not known yet
}

// get looks up comp's output name.
func (x *OutputIndex) get(comp, name string) outputResult {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if vals, ok := x.values[comp]; ok {
		v, found := vals[name]
		return outputResult{comp: comp, value: v, found: found}
	}
	if p, ok := x.pos[comp]; ok {
		l := x.byName[name]
		i := sort.SearchInts(l, p)
		if i < len(l) && l[i] == p {
			return outputResult{comp: comp, found: true, pending: true}
		}
	}
	return outputResult{comp: comp}
}

// plain resolves a plain output name for the component asking, of kind
// kind: the latest component before it in deploy order that declares the
// name, among those of another kind.
func (x *OutputIndex) plain(name, asking, kind string) outputResult {
	x.mu.RLock()
	p, ok := x.pos[asking]
	l := x.byName[name]
	x.mu.RUnlock()
	if !ok {
		p = len(x.comps)
	}
	i := sort.SearchInts(l, p) - 1
	for ; i >= 0; i-- {
		comp := x.comps[l[i]]
		if x.visible != nil && ok && !x.visible(comp, asking) || x.hidden(comp, kind) {
			continue
		}
		r := x.get(comp, name)
		if r.found {
			return r
		}
	}
	return outputResult{}
}

// StackSecretTracking returns a resolver of names as the stack's outputs
// and steps see them — a plain name is the output of the latest component
// in deploy order that has it, else a stack parameter; ${component:name}
// is that component's output — and a function that reports whether any
// value it gave out was secret: what is computed from a secret is secret,
// however it transforms the value.
func StackSecretTracking(locked *Locked, outputs *OutputIndex, order []string) (Resolver, func() bool) {
	r := &stackResolver{locked: locked, outputs: outputs, order: order}
	return r, func() bool { return r.secrets }
}

type stackResolver struct {
	locked  *Locked
	outputs *OutputIndex
	order   []string
	secrets bool // a value given out was secret
}

func (r *stackResolver) Lookup(name string) (string, error) {
	for i := len(r.order) - 1; i >= 0; i-- {
		if vals := r.outputs.Values(r.order[i]); vals != nil {
			if v, ok := vals[name]; ok {
				r.secrets = r.secrets || r.outputs.IsSecret(r.order[i], name)
				return v, nil
			}
		}
	}
	if v := r.locked.Get(name); v != nil && !v.Link {
		r.secrets = r.secrets || v.Secret
		return v.Value, nil
	}
	return "", &UnknownError{Name: name}
}

// SecretRead reports whether a value given out was secret.
func (r *stackResolver) SecretRead() bool { return r.secrets }

func (r *stackResolver) Output(comp, name string) (string, error) {
	if vals := r.outputs.Values(comp); vals != nil {
		if v, ok := vals[name]; ok {
			r.secrets = r.secrets || r.outputs.IsSecret(comp, name)
			return v, nil
		}
	}
	return "", &UnknownError{Name: name, Component: comp}
}
