package params

import (
	"errors"
	"maps"
	"strings"
	"sync"
)

// Read is a value a component read outside its own parameters — a stack
// parameter, an output or hub.provides, read by a template, a lifecycle
// step or an output's value — as it was when read. Absent says the name
// was looked up and nothing defined it (a template may test for it).
type Read struct {
	Value  string
	Secret bool
	Absent bool
	// From is the component whose output the value is, "" for a
	// parameter.
	From string
}

// readLog collects the reads of one component's templates, steps and
// output values, which may be made from more than one goroutine.
type readLog struct {
	mu sync.Mutex
	m  map[string]Read
}

func (l *readLog) add(key string, r Read) {
	if l == nil {
		return
	}
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]Read{}
	}
	l.m[key] = r
	l.mu.Unlock()
}

// ReadKey names a read: the plain name, or "component:output" for an
// output named with its component.
func ReadKey(component, name string) string {
	if component == "" {
		return name
	}
	return component + ":" + name
}

// Reads are the values the resolvers Resolver and SecretTracking gave out
// so far of names outside the component's own parameters, by ReadKey. The
// fingerprint covers the component's parameters, not these: a deploy
// records them so that a later plan can tell whether they changed (F2 of
// the plan-honesty hunt: a template reading a stack parameter it does not
// declare). hub.componentName is left out: it never changes.
func (e *Expanded) Reads() map[string]Read {
	if e == nil || e.reads == nil {
		return nil
	}
	e.reads.mu.Lock()
	defer e.reads.mu.Unlock()
	return maps.Clone(e.reads.m)
}

// LookupRead resolves a read's key now, as the component's templates,
// steps and output values would, without recording it: what a plan
// compares with a recorded read. An error is one other than the name's
// not being defined (that is Absent): a pending output, a failed link.
func (e *Expanded) LookupRead(key string) (Read, error) {
	x := e.x.fork(false)
	r := &compResolver{x: x}
	var v, from string
	var err error
	if comp, name, ok := strings.Cut(key, ":"); ok {
		v, err = r.Output(comp, name)
		from = comp
	} else {
		var source string
		var isOutput bool
		v, source, err = x.global(key)
		if from, isOutput = strings.CutPrefix(source, "output:"); !isOutput {
			from = ""
		}
	}
	var unknown *UnknownError
	if errors.As(err, &unknown) {
		return Read{Absent: true}, nil
	}
	if err != nil {
		return Read{}, err
	}
	if x.readProvides {
		e.x.readProvides = true
	}
	return Read{Value: v, Secret: x.secrets, From: from}, nil
}

// record notes a read the resolver made of a name outside the component's
// own parameters, when the resolver records (those handed out after the
// expansion); secret says the value read a secret, from names the
// component whose output it is.
func (r *compResolver) record(key, value, from string, err error, secret bool) {
	if r.reads == nil || key == ComponentName {
		return
	}
	var unknown *UnknownError
	switch {
	case err == nil:
		r.reads.add(key, Read{Value: value, Secret: secret, From: from})
	case errors.As(err, &unknown):
		r.reads.add(key, Read{Absent: true})
	}
}

// StackValue is the value of the stack parameter name as the component
// reads it where no parameter of its own stands in between (a tuning
// condition, seed 000): a link parameter expanded in the component's
// scope, with the outputs known so far. found is false when the stack has
// no such parameter. The error is the link's: an output not known yet
// (*PendingError), or one that cannot be read.
func (e *Expanded) StackValue(name string) (value string, found bool, err error) {
	v := e.x.in.Locked.Get(name)
	if v == nil {
		return "", false, nil
	}
	s, _, err := e.x.fork(false).topLevel(v)
	return s, true, err
}
