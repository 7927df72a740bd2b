package kubernetes

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gantry-dev/gantry/internal/objpath"
	"github.com/gantry-dev/gantry/internal/plugin"
)

// readOutputs is the outputs stage (plugin.StageOutputs): it reads each
// output the component declares with fromObject from the cluster and
// reports them together. A value that is not there yet (a LoadBalancer's
// address, a Secret an operator writes) is waited for, up to the
// instance's timeout. Values are never printed: a Secret's are secret.
func (r *release) readOutputs(ctx context.Context, c *plugin.Call) error {
	if c.Report == nil {
		return errors.New("internal error: the outputs stage has nowhere to report to")
	}
	values := map[string]string{}
	var secret []string
	var errs []error
	// One deadline for the stage: outputs that cannot be read do not wait
	// one after the other.
	tctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	for _, o := range c.Outputs {
		v, isSecret, err := r.readOutput(ctx, tctx, o)
		if err != nil {
			errs = append(errs, fmt.Errorf("output %s: %w", o.Name, err))
			continue
		}
		values[o.Name] = v
		if isSecret {
			secret = append(secret, o.Name)
		}
	}
	// Report before returning an error too: secret values reach the
	// masker whatever happens next.
	c.Report(values, secret)
	return errors.Join(errs...)
}

// readOutput reads one output, waiting until its object exists and the
// path has a value, or until tctx (the stage's deadline) ends. Errors the
// API server may get over (throttling, unavailability, timeouts) are
// waited out too.
func (r *release) readOutput(ctx, tctx context.Context, o plugin.ObjectOutput) (string, bool, error) {
	path, err := objpath.Parse(o.Path)
	if err != nil {
		return "", false, err
	}
	kind, group, _ := strings.Cut(o.Kind, ".")
	gvk, err := r.cl.kindFor(kind, group)
	if err != nil {
		return "", false, err
	}
	m, err := r.cl.mapping(gvk)
	if err != nil {
		return "", false, err
	}
	res := r.cl.dyn.Resource(m.Resource)
	ref := strings.ToLower(gvk.Kind) + "/" + o.Object
	get := res.Get
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := o.Namespace
		if ns == "" {
			ns = r.cl.namespace
		}
		get = res.Namespace(ns).Get
		ref = ns + "/" + ref
	}
	isSecret := gvk.Group == "" && gvk.Kind == "Secret"
	wait, waiting := 100*time.Millisecond, ""
	for {
		u, err := get(tctx, o.Object, metav1.GetOptions{})
		var why string
		switch {
		case apierrors.IsNotFound(err):
			why = "it does not exist"
		case transient(err) && tctx.Err() == nil:
			why = err.Error()
		case err != nil && tctx.Err() == nil:
			return "", isSecret, fmt.Errorf("read %s: %w", ref, err)
		case err == nil:
			v, perr := path.Get(u.Object)
			switch {
			case perr != nil:
				why = perr.Error()
			case v == nil || v == "":
				why = path.String() + " is empty"
			default:
				s, ferr := outputText(v, isSecret && path.Root() == "data")
				if ferr != nil {
					return "", isSecret, fmt.Errorf("%s %s: %w", ref, path, ferr)
				}
				r.logf("read %s from %s %s", o.Name, ref, path)
				return s, isSecret, nil
			}
		}
		if why != waiting && why != "" {
			r.logf("waiting for %s %s: %s", ref, path, why)
			waiting = why
		}
		select {
		case <-tctx.Done():
			if ctx.Err() != nil {
				return "", isSecret, ctx.Err()
			}
			if why == "" {
				why = "the API server did not answer"
			}
			return "", isSecret, fmt.Errorf("%s %s: no value after %s: %s", ref, path, r.timeout, why)
		case <-time.After(wait):
		}
		if wait < 2*time.Second {
			wait *= 2
		}
	}
}

// transient reports an API error that a later request may not get.
func transient(err error) bool {
	return apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTimeout(err) || apierrors.IsInternalError(err)
}

// outputText turns a value of an object into an output's text: strings as
// they are (a Secret's data decoded from base64), numbers and booleans as
// JSON writes them, objects and lists as JSON.
func outputText(v any, base64Data bool) (string, error) {
	switch x := v.(type) {
	case string:
		if base64Data {
			b, err := base64.StdEncoding.DecodeString(x)
			if err != nil {
				return "", errors.New("the Secret's data is not base64")
			}
			return string(b), nil
		}
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
