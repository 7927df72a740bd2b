package manifest

import (
	"math"
	"path"
	"regexp"
	"strconv"
	"time"

	"github.com/goccy/go-yaml"
)

// Duration is a positive duration: a number of seconds (fractions
// allowed) or Go's duration syntax ("90s", "10m", "1h30m").
type Duration struct {
	Pos Pos
	D   time.Duration
}

func (t *Duration) decodeNode(d *decoder, n *Node, p string) {
	t.Pos = n.Pos
	const want = "a positive duration (seconds, or like 90s, 10m)"
	if n.Kind != ScalarNode {
		d.expect(n, p, want)
		return
	}
	if f, ok := floatValue(n); ok {
		if !(f > 0) || math.IsInf(f, 0) || f > math.MaxInt64/float64(time.Second) {
			d.errorf(n.Pos, p, "expected %s, got %s", want, n.Value)
			return
		}
		t.D = time.Duration(f * float64(time.Second))
		return
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil || v <= 0 {
		d.errorf(n.Pos, p, "expected %s, got %q", want, n.Value)
		return
	}
	t.D = v
}

// MarshalYAML writes the duration as Go writes it, which loads back.
func (t Duration) MarshalYAML() (any, error) { return t.D.String(), nil }

// Retries says how often a failed step is tried again (Terragrunt's
// retryable_errors): Attempts in all, the first included; Backoff before
// the second, doubling after each further failure; only failures When
// matches (any failure when it is empty).
type Retries struct {
	Pos      Pos
	Attempts int
	Backoff  time.Duration
	When     RetryWhen
}

// RetryWhen are the failures worth another attempt: the exit codes of the
// step's process, and regular expressions (RE2) that its output or its
// error match.
type RetryWhen struct {
	ExitCodes []int
	Patterns  []string
}

// DefaultBackoff is the wait before a step's second attempt when retries
// give none.
const DefaultBackoff = time.Second

func (r *Retries) decodeNode(d *decoder, n *Node, p string) {
	r.Pos = n.Pos
	var f struct {
		Attempts *Node   `yaml:"attempts,required"`
		Backoff  *Node   `yaml:"backoff"`
		When     []*Node `yaml:"when"`
	}
	d.decode(n, reflectOf(&f), p)
	if f.Attempts != nil {
		a, ok := intValue(f.Attempts)
		if !ok || a < 1 || a > 100 {
			d.errorf(f.Attempts.Pos, childPath(p, "attempts"), "expected the number of attempts in all, the first included (1 to 100), got %s", f.Attempts.Describe())
		}
		r.Attempts = int(a)
	}
	r.Backoff = DefaultBackoff
	if f.Backoff != nil {
		var b Duration
		b.decodeNode(d, f.Backoff, childPath(p, "backoff"))
		r.Backoff = b.D
	}
	for i, it := range f.When {
		ip := itemPath(childPath(p, "when"), i)
		if it == nil || it.Kind != ScalarNode {
			d.expect(it, ip, "an exit code or a regular expression of the output")
			continue
		}
		if it.Type == IntScalar {
			c, ok := intValue(it)
			if !ok || c < 1 || c > 255 {
				d.errorf(it.Pos, ip, "expected an exit code from 1 to 255, got %s", it.Value)
				continue
			}
			r.When.ExitCodes = append(r.When.ExitCodes, int(c))
			continue
		}
		if _, err := regexp.Compile(it.Value); err != nil {
			d.errorf(it.Pos, ip, "expected a regular expression of the output (RE2 syntax), got %q: %v", it.Value, err)
			continue
		}
		r.When.Patterns = append(r.When.Patterns, it.Value)
	}
}

// MarshalYAML writes the retries in the shape they were read in.
func (r Retries) MarshalYAML() (any, error) {
	body := yaml.MapSlice{{Key: "attempts", Value: r.Attempts}}
	if r.Backoff != DefaultBackoff {
		body = append(body, yaml.MapItem{Key: "backoff", Value: r.Backoff.String()})
	}
	var when []any
	for _, c := range r.When.ExitCodes {
		when = append(when, c)
	}
	for _, s := range r.When.Patterns {
		when = append(when, s)
	}
	if len(when) > 0 {
		body = append(body, yaml.MapItem{Key: "when", Value: when})
	}
	return body, nil
}

// FingerprintOptions tune what a component's fingerprint reads of its
// folder: Exclude globs leave out files the component writes there itself
// (a pid file, logs).
type FingerprintOptions struct {
	Pos     Pos
	Exclude []string
}

func (o *FingerprintOptions) decodeNode(d *decoder, n *Node, p string) {
	o.Pos = n.Pos
	var f struct {
		Exclude []*Node `yaml:"exclude"`
	}
	d.decode(n, reflectOf(&f), p)
	for i, it := range f.Exclude {
		ip := itemPath(childPath(p, "exclude"), i)
		if it == nil || it.Kind != ScalarNode || it.Value == "" {
			d.expect(it, ip, "a glob of files of the component's folder")
			continue
		}
		if _, err := path.Match(it.Value, ""); err != nil {
			d.errorf(it.Pos, ip, "expected a glob of files of the component's folder, got %s: %v", strconv.Quote(it.Value), err)
			continue
		}
		o.Exclude = append(o.Exclude, it.Value)
	}
}

// MarshalYAML writes the options as they were read.
func (o FingerprintOptions) MarshalYAML() (any, error) {
	return map[string]any{"exclude": o.Exclude}, nil
}
