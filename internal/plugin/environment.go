package plugin

import "context"

// EnvironmentCheck tells whether the environment provides a capability,
// and why not: the kubernetes plugin's check asks the cluster a kubeconfig
// names, where a tool on PATH proves nothing.
type EnvironmentCheck func(ctx context.Context, env []string) error

var environmentChecks = map[string]EnvironmentCheck{}

// RegisterEnvironment sets how a capability of the environment is checked,
// instead of looking for its tool on PATH.
func RegisterEnvironment(capability string, check EnvironmentCheck) {
	environmentChecks[capability] = check
}

// Environment returns the check of a capability, if a plugin registered one.
func Environment(capability string) (EnvironmentCheck, bool) {
	c, ok := environmentChecks[capability]
	return c, ok
}
