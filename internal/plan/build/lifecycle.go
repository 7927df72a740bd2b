package build

import (
	"reflect"
	"slices"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// Injection points of a component plan (seed 001), in the order a deploy and
// a teardown of a script component meet them. Readiness and the standard
// service discovery steps sit where the comments say.
var (
	deployPoints = []string{
		"pre_component", "pre_instance_create", verbPoint, "post_instance_create", "on_change",
		readyPoint, "service_discovery_attach", "post_instance_attach", "quality_probe", "post_component",
	}
	teardownPoints = []string{
		"pre_component", "service_discovery_detach", "post_instance_detach", "pre_instance_destroy", verbPoint,
		"post_instance_destroy", "on_change", "post_component",
	}
)

const (
	verbPoint  = "(verb)"
	readyPoint = "(ready)"
)

// EffectiveLifecycle is a component's lifecycle: the manifest's, with every
// field the stack's component entry sets taking its place.
func EffectiveLifecycle(c *manifest.Component, ref *manifest.ComponentRef) manifest.ComponentLifecycle {
	var out manifest.ComponentLifecycle
	if c != nil {
		out = c.Lifecycle
	}
	if ref == nil || ref.Lifecycle == nil {
		return out
	}
	dst := reflect.ValueOf(&out).Elem()
	src := reflect.ValueOf(ref.Lifecycle).Elem()
	for i := 0; i < src.NumField(); i++ {
		f := src.Field(i)
		if dst.Type().Field(i).Name == "Pos" || dst.Type().Field(i).Name == "Positions" {
			continue
		}
		if !f.IsZero() {
			dst.Field(i).Set(f)
		}
	}
	return out
}

// pointSteps returns the injected steps of a point; service discovery detach
// steps run in reverse order (seed 001: reversed in cleanup steps).
func pointSteps(l *manifest.ComponentLifecycle, point string) []manifest.Step {
	switch point {
	case "pre_component":
		return ip(l.PreComponent)
	case "post_component":
		return ip(l.PostComponent)
	case "pre_instance_create":
		return ip(l.PreInstanceCreate)
	case "post_instance_create":
		return ip(l.PostInstanceCreate)
	case "post_instance_attach":
		return ip(l.PostInstanceAttach)
	case "quality_probe":
		return ip(l.QualityProbe)
	case "post_instance_detach":
		return ip(l.PostInstanceDetach)
	case "pre_instance_destroy":
		return ip(l.PreInstanceDestroy)
	case "post_instance_destroy":
		return ip(l.PostInstanceDestroy)
	case "on_change":
		return ip(l.OnChange)
	case "service_discovery_attach":
		if l.ServiceDiscoveryAttach != nil {
			return l.ServiceDiscoveryAttach.Steps
		}
	case "service_discovery_detach":
		if l.ServiceDiscoveryDetach != nil {
			steps := append([]manifest.Step(nil), l.ServiceDiscoveryDetach.Steps...)
			for i, j := 0, len(steps)-1; i < j; i, j = i+1, j-1 {
				steps[i], steps[j] = steps[j], steps[i]
			}
			return steps
		}
	}
	return nil
}

func ip(p *manifest.InjectionPoint) []manifest.Step {
	if p == nil {
		return nil
	}
	return p.Steps
}

// LifecycleSteps are every step injected into a lifecycle, at any point: what
// the resolve phase looks at before a plan is built.
func LifecycleSteps(l *manifest.ComponentLifecycle) []manifest.Step {
	var out []manifest.Step
	for _, p := range allPoints {
		out = append(out, pointSteps(l, p)...)
	}
	return out
}

// allPoints are the points of deploys and teardowns, each once, in that
// order (a map to drop the shared ones cost 2 µs a component).
var allPoints = func() []string {
	var out []string
	for _, p := range append(append([]string{}, deployPoints...), teardownPoints...) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}()
