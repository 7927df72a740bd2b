package steps

import "github.com/gantry-dev/gantry/internal/params"

// ownOutputs is a resolver that also sees a component's own outputs, as a
// Hub ready condition does: it waits for what the component just made
// (traefik's ${component.ingress.ssoFqdn}), and the Hub expands it with the
// outputs the deploy captured, the component's own among them and winning
// over a parameter of the same name.
type ownOutputs struct {
	params.Resolver
	comp   string
	values map[string]string
	secret func(name string) bool
	read   bool // a secret output was given out
}

// withOwnOutputs wraps tracking so that the resolvers it makes see the
// outputs of comp that the run captured.
func withOwnOutputs(tracking func() (params.Resolver, func() bool), comp string, outputs *params.OutputIndex) func() (params.Resolver, func() bool) {
	return func() (params.Resolver, func() bool) {
		r, readSecret := tracking()
		values := outputs.Values(comp)
		if len(values) == 0 {
			return r, readSecret
		}
		o := &ownOutputs{Resolver: r, comp: comp, values: values, secret: func(name string) bool { return outputs.IsSecret(comp, name) }}
		return o, func() bool { return o.read || readSecret() }
	}
}

// Lookup gives the component's own output of that name first.
func (o *ownOutputs) Lookup(name string) (string, error) {
	if v, ok := o.own(name); ok {
		return v, nil
	}
	return o.Resolver.Lookup(name)
}

// Output gives the component's own outputs as ${component:name}.
func (o *ownOutputs) Output(component, name string) (string, error) {
	if component == o.comp {
		if v, ok := o.own(name); ok {
			return v, nil
		}
	}
	return o.Resolver.Output(component, name)
}

func (o *ownOutputs) own(name string) (string, bool) {
	v, ok := o.values[name]
	if ok && o.secret(name) {
		o.read = true
	}
	return v, ok
}

// SecretRead reports whether a value given out so far was secret.
func (o *ownOutputs) SecretRead() bool { return o.read || params.ReadsSecret(o.Resolver) }

// Budget is the budget of the wrapped resolver.
func (o *ownOutputs) Budget() *params.Budget { return params.BudgetOf(o.Resolver) }
