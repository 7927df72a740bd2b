package elaborate

import (
	"slices"
	"sort"
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/state"
)

// providedByEnvironment are the capabilities the tools on PATH provide: a
// platform's state never takes them off the stack's requires (the Hub
// CLI's requirementProvidedByEnvironment).
var providedByEnvironment = []string{"aws", "gcp", "gcs", "azure", "kubectl", "kubernetes", "helm", "vault"}

// kubernetesParameters are the values a Kubernetes cluster is reached by,
// as the Hub CLI's platform stacks output them.
var kubernetesParameters = []string{"dns.domain", "kubernetes.flavor", "kubernetes.api.endpoint",
	"kubernetes.api.token", "kubernetes.api.caCert", "kubernetes.api.clientCert", "kubernetes.api.clientKey",
	"kubernetes.eks.cluster", "kubernetes.gke.cluster"}

// kubernetesProviders are the component names the Hub CLI looks for a
// cluster's outputs in, after those the state says provide kubernetes.
var kubernetesProviders = []string{"kubernetes", "eks", "gke", "aks",
	"stack-k8s-aws", "stack-k8s-eks", "stack-k8s-gke", "stack-k8s-aks",
	"k8s-aws", "k8s-eks", "k8s-gke", "k8s-aks", "k8s-hybrid", "k8s-metal", "k8s-openshift"}

// OverPlatform elaborates the stack over a platform stack's state, as the
// Hub CLI's elaborate -s does, for a stack deployed onto another (an
// overlay): the platform's stack outputs (by their name without the
// component) and its unqualified stack parameters give a value to this
// stack's top-level parameters that have none, hub.* aside — to the
// default of one read fromEnv, so that the environment still wins; a stack
// that requires kubernetes or kubectl gets the cluster's parameters the
// platform has; the platform's provides become platform.provides and are
// taken off the stack's requires. It returns the warnings.
func (r *Result) OverPlatform(st *state.State, from string) manifest.Diagnostics {
	var diags manifest.Diagnostics
	s := r.Stack
	values := map[string]string{}
	secret := map[string]bool{}
	for q, v := range st.Parameters {
		if !strings.Contains(q, "|") && v != "" {
			values[q] = v
			secret[q] = slices.Contains(st.SecretParameters, q)
		}
	}
	short, took := shortOutputs(st)
	for name, full := range took {
		values[name] = short[name]
		secret[name] = slices.Contains(st.SecretOutputs, full)
	}
	kube := kubernetesValues(st)
	if slices.Contains(s.Requires, "kubernetes") || slices.Contains(s.Requires, "kubectl") {
		for _, n := range kubernetesParameters {
			if kube[n] != "" && !slices.ContainsFunc(s.Parameters, func(p manifest.Parameter) bool { return p.QName() == n }) {
				s.Parameters = append(s.Parameters, manifest.Parameter{Name: n})
			}
		}
		sort.SliceStable(s.Parameters, func(i, j int) bool { return s.Parameters[i].QName() < s.Parameters[j].QName() })
	}
	for i := range s.Parameters {
		p := &s.Parameters[i]
		if strings.HasPrefix(p.Name, "hub.") || p.Value != "" {
			continue
		}
		v, ok := values[p.Name]
		if !ok {
			if v = kube[p.Name]; v == "" {
				continue
			}
		}
		if secret[p.Name] {
			yes := true
			p.Secret = &yes
		}
		if p.FromEnv == "" {
			p.Value = manifest.Scalar(v)
			continue
		}
		if p.Default != "" && string(p.Default) != v {
			diags.Warnf(p.Pos, "parameters", "%s: its default is replaced by the value of the platform state %s, as fromEnv %s reads it", p.QName(), from, p.FromEnv)
		}
		p.Default = manifest.Scalar(v)
	}
	if len(st.Provides) > 0 {
		var requires []string
		for _, req := range s.Requires {
			if _, ok := st.Provides[req]; !ok || slices.Contains(providedByEnvironment, req) {
				requires = append(requires, req)
			}
		}
		s.Requires = requires
		if s.Platform == nil {
			s.Platform = &manifest.Platform{}
		}
		provided := make([]string, 0, len(st.Provides))
		for c := range st.Provides {
			provided = append(provided, c)
		}
		sort.Strings(provided)
		for _, c := range provided {
			if !slices.Contains(s.Platform.Provides, c) {
				s.Platform.Provides = append(s.Platform.Provides, c)
			}
		}
	}
	return diags
}

// kubernetesValues are the cluster's parameters a platform's state has, where
// the Hub CLI looks for them: its stack outputs when they hold two or more,
// else the outputs of the first component providing kubernetes, else its
// stack parameters.
func kubernetesValues(st *state.State) map[string]string {
	short, _ := shortOutputs(st)
	if out := onlyKubernetes(short); len(out) >= 2 {
		return out
	}
	for _, name := range append(slices.Clone(st.Provides["kubernetes"]), kubernetesProviders...) {
		if c := st.Components[name]; c != nil && len(c.Outputs) > 0 {
			return onlyKubernetes(c.Outputs)
		}
	}
	return onlyKubernetes(st.Parameters)
}

// shortOutputs are a state's stack outputs by their name without the
// component ("net:vpc.id" is vpc.id), and the full name each was taken
// from. Of two with one short name, the output of the component later in
// deploy order is taken, as the Hub CLI, which keeps them as a list in
// that order, takes the last: the same one on every run.
func shortOutputs(st *state.State) (values, from map[string]string) {
	rank := map[string]int{}
	for i, c := range st.ComponentOrder() {
		rank[c] = i + 1
	}
	split := func(name string) (comp, short string) {
		if i := strings.Index(name, ":"); i > 0 && i < len(name)-1 {
			return name[:i], name[i+1:]
		}
		return "", name
	}
	names := make([]string, 0, len(st.Outputs))
	for name := range st.Outputs {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		ci, _ := split(names[i])
		cj, _ := split(names[j])
		if rank[ci] != rank[cj] {
			return rank[ci] < rank[cj]
		}
		return names[i] < names[j]
	})
	values, from = make(map[string]string, len(names)), make(map[string]string, len(names))
	for _, name := range names {
		_, short := split(name)
		values[short], from[short] = st.Outputs[name], name
	}
	return values, from
}

// onlyKubernetes are the values of m that are a cluster's parameters.
func onlyKubernetes(m map[string]string) map[string]string {
	out := map[string]string{}
	for _, n := range kubernetesParameters {
		if v, ok := m[n]; ok {
			out[n] = v
		}
	}
	return out
}
