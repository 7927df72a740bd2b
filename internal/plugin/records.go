package plugin

import (
	"fmt"
	"slices"

	"github.com/gantry-dev/gantry/internal/state"
)

// FromRecord turns recorded instances back into specs.
func FromRecord(list []state.PluginInstance) []*Spec {
	if len(list) == 0 {
		return nil
	}
	out := make([]*Spec, len(list))
	for i, p := range list {
		out[i] = &Spec{Name: p.Name, Key: p.Key, Path: p.Path, Args: p.Args, Config: p.Config, Hidden: p.Hidden, Label: p.Label, OnFail: p.OnFail, Children: FromRecord(p.Children)}
	}
	return out
}

// ToRecord is what the state keeps of expanded plugin lists: every entry
// with its structure, and for instances the config they resolved (a config
// path reads a parameter), so that they can be deleted as they were deployed.
func ToRecord(specs []*Spec, params map[string]string) []state.PluginInstance {
	if len(specs) == 0 {
		return nil
	}
	out := make([]state.PluginInstance, len(specs))
	for i, s := range specs {
		config := s.Config
		if s.Key != "" {
			if c, err := InstanceConfig(s, params); err == nil {
				config = c
			}
		}
		out[i] = state.PluginInstance{Key: s.Key, Name: s.Name, Path: s.Path, Args: s.Args, Config: config, Hidden: s.Hidden, Label: s.Label, OnFail: s.OnFail, Children: ToRecord(s.Children, params)}
	}
	return out
}

// Vanished are the instances a record has that the lists no longer have, in
// their recorded order: a deploy deletes them after the deployment.
func Vanished(rec *state.Component, lists ...[]*Spec) []*Spec {
	if rec == nil {
		return nil
	}
	current := map[string]bool{}
	for _, l := range lists {
		for _, s := range Keyed(l) {
			current[s.Key] = true
		}
	}
	var gone []*Spec
	for _, s := range Keyed(append(FromRecord(rec.Plugins), FromRecord(rec.SetupPlugins)...)) {
		if !current[s.Key] {
			gone = append(gone, s)
		}
	}
	return gone
}

// CarryResources copies into list, by instance key, the resources that
// from records: entries made from specs know nothing of what their
// instances created, and recording them afresh must not forget it.
func CarryResources(list []state.PluginInstance, from ...[]state.PluginInstance) {
	type held struct {
		resources []state.Resource
		cluster   string
	}
	known := map[string]held{}
	var collect func(l []state.PluginInstance)
	collect = func(l []state.PluginInstance) {
		for _, p := range l {
			if p.Key != "" && len(p.Resources) > 0 {
				known[p.Key] = held{p.Resources, p.Cluster}
			}
			collect(p.Children)
		}
	}
	for _, l := range from {
		collect(l)
	}
	var carry func(l []state.PluginInstance)
	carry = func(l []state.PluginInstance) {
		for i := range l {
			if h, ok := known[l[i].Key]; ok && l[i].Key != "" && len(l[i].Resources) == 0 {
				l[i].Resources, l[i].Cluster = h.resources, h.cluster
			}
			carry(l[i].Children)
		}
	}
	carry(list)
}

// SetResources records, in a component's recorded lists, the resources of
// the instance with the key and the cluster they are in; it reports whether
// it found the instance.
func SetResources(c *state.Component, key string, resources []state.Resource, cluster string) bool {
	var set func(l []state.PluginInstance) bool
	set = func(l []state.PluginInstance) bool {
		for i := range l {
			if l[i].Key == key {
				l[i].Resources, l[i].Cluster = resources, cluster
				return true
			}
			if set(l[i].Children) {
				return true
			}
		}
		return false
	}
	return set(c.Plugins) || set(c.SetupPlugins)
}

// OtherResources are the resources a state records of every plugin
// instance but one (the instance key of component), by component.
func OtherResources(st *state.State, component, key string) map[string][]state.Resource {
	out := map[string][]state.Resource{}
	var walk func(name string, list []state.PluginInstance)
	walk = func(name string, list []state.PluginInstance) {
		for _, p := range list {
			if !(name == component && p.Key == key) && len(p.Resources) > 0 {
				out[name] = append(out[name], p.Resources...)
			}
			walk(name, p.Children)
		}
	}
	if st == nil {
		return out
	}
	for name, c := range st.Components {
		if c == nil {
			continue
		}
		walk(name, c.Plugins)
		walk(name, c.SetupPlugins)
	}
	return out
}

// ForgetIfHeld is the step that makes "the last holder deletes it" safe
// when several instances give up one object at once: when another
// instance of the stack (another component, or another instance of this
// one) records a resource that match selects, the instance with the key
// of component forgets it — every resource match selects — and ForgetIfHeld
// returns the components that hold it (sorted), forgot whether the record
// changed. With none, nothing changes: the instance is the last to hold
// it, and deletes it. Call it under the lock of whatever holds st.
func ForgetIfHeld(st *state.State, c *state.Component, component, key string, match func(state.Resource) bool) (holders []string, forgot bool) {
	for name, list := range OtherResources(st, component, key) {
		if slices.ContainsFunc(list, match) {
			holders = append(holders, name)
		}
	}
	if len(holders) == 0 {
		return nil, false
	}
	slices.Sort(holders)
	var walk func(l []state.PluginInstance) bool
	walk = func(l []state.PluginInstance) bool {
		for i := range l {
			if l[i].Key == key {
				n := len(l[i].Resources)
				l[i].Resources = slices.DeleteFunc(slices.Clone(l[i].Resources), match)
				forgot = len(l[i].Resources) != n
				return true
			}
			if walk(l[i].Children) {
				return true
			}
		}
		return false
	}
	if !walk(c.Plugins) {
		walk(c.SetupPlugins)
	}
	return holders, forgot
}

// ForgetIfHeldIn is Call.ForgetIfHeld of the instance with the key of
// component (named instance in errors) over a recorder's state: one step
// under its lock, then a wait until the state file holds the change.
func ForgetIfHeldIn(rec *state.Recorder, component, key, instance string) func(match func(state.Resource) bool) ([]string, error) {
	return func(match func(state.Resource) bool) ([]string, error) {
		var holders []string
		ver := rec.UpdateComponentSeeing(component, func(st *state.State, c *state.Component) bool {
			var forgot bool
			holders, forgot = ForgetIfHeld(st, c, component, key, match)
			return forgot
		})
		if err := rec.Wait(ver); err != nil {
			return nil, fmt.Errorf("record the resources of %s in the state: %w", instance, err)
		}
		return holders, nil
	}
}
