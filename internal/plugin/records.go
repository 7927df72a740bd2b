package plugin

import "github.com/gantry-dev/gantry/internal/state"

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
