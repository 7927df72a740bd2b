package manifest

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
)

// StepType is the type of an injected lifecycle step (seed 001).
type StepType string

// The injected step types.
const (
	StepExec  StepType = "exec"
	StepCall  StepType = "call"
	StepProbe StepType = "probe"
	StepGate  StepType = "gate"
	StepDelay StepType = "delay"
)

var stepTypes = []string{"exec", "call", "probe", "gate", "delay"}

// OnFail actions of a step.
const (
	OnFailNext  = "next"
	OnFailWarn  = "warn"
	OnFailInfo  = "info"
	OnFailPause = "pause"
)

var onFailValues = []string{OnFailNext, OnFailWarn, OnFailInfo, OnFailPause}

// DefaultProbeTimeout is the probe timeout when none is given, in seconds.
const DefaultProbeTimeout = 300

// Probe plugins built into gantry.
var probePlugins = map[string][]string{
	"http": {"get_wait", "get"},
	"tcp":  {"connect_wait", "connect"},
	"exec": {"run_wait", "run"},
}

// Step is one injected lifecycle step, in either abbreviated or full syntax.
type Step struct {
	Pos     Pos
	Type    StepType
	Label   string
	OnFail  []string
	Args    []string       // exec: the command and its arguments
	Plugin  string         // call, probe
	Action  string         // call, probe
	Params  map[string]any // call, probe: the key-value arguments
	Message string         // gate
	Seconds float64        // delay: duration; probe: timeout
	Logfile string         // probe
	// Timeout bounds each attempt of an exec or call step; Retries tries
	// it again when it fails.
	Timeout *Duration
	Retries *Retries
}

// Has reports whether the step's on_fail list holds action.
func (s *Step) Has(action string) bool {
	for _, a := range s.OnFail {
		if a == action {
			return true
		}
	}
	return false
}

func (s *Step) decodeNode(d *decoder, n *Node, path string) {
	s.Pos = n.Pos
	if n.Kind == ScalarNode {
		d.errorf(n.Pos, path, "expected a step (a mapping with one of %s), got %s", quoteList(stepTypes), n.Describe())
		return
	}
	if n.Kind != MapNode || len(n.Entries) == 0 {
		d.expect(n, path, "a step (a mapping with one of "+quoteList(stepTypes)+")")
		return
	}
	if len(n.Entries) > 1 {
		keys := make([]string, len(n.Entries))
		for i, e := range n.Entries {
			keys[i] = e.Key
		}
		d.errorf(n.Pos, path, "a step has exactly one type key, got %s (put label and on_fail inside the step)", quoteAll(keys))
		return
	}
	e := n.Entries[0]
	p := childPath(path, e.Key)
	s.Type = StepType(e.Key)
	v := e.Value
	switch s.Type {
	case StepExec:
		s.decodeExec(d, v, p)
	case StepCall:
		s.decodeCall(d, v, p)
	case StepProbe:
		s.decodeProbe(d, v, p)
	case StepGate:
		if v.Kind == ScalarNode {
			s.Message = v.Value
			if strings.TrimSpace(s.Message) == "" {
				d.errorf(v.Pos, p, "a gate needs a message")
			}
		} else {
			var f struct {
				Message string     `yaml:"message,required"`
				Label   string     `yaml:"label"`
				OnFail  onFailList `yaml:"on_fail"`
			}
			d.decode(v, reflectOf(&f), p)
			s.Message, s.Label, s.OnFail = f.Message, f.Label, f.OnFail
		}
	case StepDelay:
		if v.Kind == ScalarNode {
			s.Seconds = d.seconds(v, p)
		} else {
			var f struct {
				Duration *Node      `yaml:"duration,required"`
				Label    string     `yaml:"label"`
				OnFail   onFailList `yaml:"on_fail"`
			}
			d.decode(v, reflectOf(&f), p)
			s.Label, s.OnFail = f.Label, f.OnFail
			if f.Duration != nil {
				s.Seconds = d.seconds(f.Duration, childPath(p, "duration"))
			}
		}
	default:
		msg := fmt.Sprintf("unknown step type %q", e.Key)
		if sg := suggest(e.Key, stepTypes); sg != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", sg)
		} else {
			msg += " (expected one of " + quoteList(stepTypes) + ")"
		}
		d.errorf(e.KeyPos, path, "%s", msg)
	}
}

// seconds decodes a positive duration in seconds; fractions are allowed.
func (d *decoder) seconds(n *Node, path string) float64 {
	f, ok := floatValue(n)
	if !ok {
		d.expect(n, path, "a positive number of seconds")
		return 0
	}
	if !(f > 0) || math.IsInf(f, 0) {
		d.errorf(n.Pos, path, "expected a positive number of seconds, got %s", n.Value)
		return 0
	}
	// The run waits a time.Duration: past ≈292 years it would wrap round
	// (a delay skipped, a probe that gives up at once).
	if f > MaxSeconds {
		d.errorf(n.Pos, path, "expected a positive number of seconds of at most %d, got %s", int64(MaxSeconds), n.Value)
		return 0
	}
	return f
}

// MaxSeconds is the longest wait in seconds a time.Duration holds.
const MaxSeconds = float64(math.MaxInt64 / int64(time.Second))

// Seconds is a wait of secs seconds; false unless 0 < secs ≤ MaxSeconds
// (NaN and larger values would wrap round: a negative wait).
func Seconds(secs float64) (time.Duration, bool) {
	if !(secs > 0) || secs > MaxSeconds {
		return 0, false
	}
	return time.Duration(secs * float64(time.Second)), true
}

func (s *Step) decodeExec(d *decoder, v *Node, p string) {
	switch v.Kind {
	case ScalarNode:
		s.Args = []string{v.Value}
	case SeqNode:
		d.decode(v, reflectOf(&s.Args), p)
	case MapNode:
		var f struct {
			Arguments []string   `yaml:"arguments,required"`
			Label     string     `yaml:"label"`
			OnFail    onFailList `yaml:"on_fail"`
			Timeout   *Duration  `yaml:"timeout"`
			Retries   *Retries   `yaml:"retries"`
		}
		d.decode(v, reflectOf(&f), p)
		s.Args, s.Label, s.OnFail, s.Timeout, s.Retries = f.Arguments, f.Label, f.OnFail, f.Timeout, f.Retries
		if v.Get("arguments") == nil {
			return // reported as a missing required field
		}
		p = childPath(p, "arguments")
	default:
		d.expect(v, p, "a command, a list of arguments or a mapping with arguments")
		return
	}
	if len(s.Args) == 0 || strings.TrimSpace(s.Args[0]) == "" {
		d.errorf(v.Pos, p, "an exec step needs at least the script to run")
	}
}

func (s *Step) decodeCall(d *decoder, v *Node, p string) {
	if v.Kind != MapNode {
		d.expect(v, p, "a mapping with action (call steps have only the full syntax)")
		return
	}
	var f struct {
		Plugin    string         `yaml:"plugin"`
		Action    string         `yaml:"action,required"`
		Arguments map[string]any `yaml:"arguments"`
		Label     string         `yaml:"label"`
		OnFail    onFailList     `yaml:"on_fail"`
		Timeout   *Duration      `yaml:"timeout"`
		Retries   *Retries       `yaml:"retries"`
	}
	d.decode(v, reflectOf(&f), p)
	s.Plugin, s.Action, s.Params, s.Label, s.OnFail = f.Plugin, f.Action, f.Arguments, f.Label, f.OnFail
	s.Timeout, s.Retries = f.Timeout, f.Retries
}

func (s *Step) decodeProbe(d *decoder, v *Node, p string) {
	s.Seconds = DefaultProbeTimeout
	if v.Kind == ScalarNode {
		s.probeTarget(d, v, p)
		return
	}
	if v.Kind != MapNode {
		d.expect(v, p, "a URL to probe or a mapping with plugin and action")
		return
	}
	var f struct {
		Plugin    string         `yaml:"plugin"`
		Image     string         `yaml:"image"`
		Action    string         `yaml:"action"`
		Arguments map[string]any `yaml:"arguments"`
		Label     string         `yaml:"label"`
		Timeout   *Node          `yaml:"timeout"`
		Network   string         `yaml:"network"`
		Logfile   string         `yaml:"logfile"`
		OnFail    onFailList     `yaml:"on_fail"`
	}
	d.decode(v, reflectOf(&f), p)
	s.Plugin, s.Action, s.Params, s.Label, s.OnFail, s.Logfile = f.Plugin, f.Action, f.Arguments, f.Label, f.OnFail, f.Logfile
	if f.Timeout != nil {
		s.Seconds = d.seconds(f.Timeout, childPath(p, "timeout"))
	}
	if f.Image != "" {
		d.errorf(v.Get("image").Pos, childPath(p, "image"), "container image probes need a container runtime, which gantry does not drive; use plugin: http, tcp or exec")
		return
	}
	if f.Network != "" {
		d.errorf(v.Get("network").Pos, childPath(p, "network"), "probe networks belong to container probes, which gantry does not run; remove the field")
	}
	actions, ok := probePlugins[s.Plugin]
	if !ok {
		d.errorf(v.Pos, childPath(p, "plugin"), "expected a probe plugin: %s, got %q", quoteList([]string{"http", "tcp", "exec"}), s.Plugin)
		return
	}
	if s.Action == "" {
		s.Action = actions[0]
	} else if !contains(actions, s.Action) {
		d.errorf(v.Get("action").Pos, childPath(p, "action"), "the %s probe has actions %s, got %q", s.Plugin, quoteList(actions), s.Action)
	}
	required := map[string]string{"http": "url", "tcp": "address", "exec": "command"}[s.Plugin]
	if _, ok := s.Params[required]; !ok {
		d.errorf(v.Pos, childPath(p, "arguments"), "the %s probe needs the argument %q", s.Plugin, required)
	}
}

// probeTarget reads the abbreviated probe syntax: a URL. http(s)://... waits for
// a 2xx/3xx answer, tcp://host:port for a connection.
func (s *Step) probeTarget(d *decoder, v *Node, p string) {
	u, err := url.Parse(v.Value)
	if err == nil {
		switch u.Scheme {
		case "http", "https":
			s.Plugin, s.Action, s.Params = "http", "get_wait", map[string]any{"url": v.Value}
			return
		case "tcp":
			s.Plugin, s.Action, s.Params = "tcp", "connect_wait", map[string]any{"address": u.Host}
			return
		}
	}
	d.errorf(v.Pos, p, "expected a URL to probe (http://..., https://... or tcp://host:port), got %s; container image probes are not supported", v.Describe())
}

// onFailList accepts a list of on_fail actions or a single one.
type onFailList []string

func (l *onFailList) decodeNode(d *decoder, n *Node, path string) {
	var items []*Node
	switch n.Kind {
	case NullNode:
		return
	case ScalarNode:
		items = []*Node{n}
	case SeqNode:
		items = n.Items
	default:
		d.expect(n, path, "a list of "+quoteList(onFailValues))
		return
	}
	for i, it := range items {
		ip := path
		if n.Kind == SeqNode {
			ip = itemPath(path, i)
		}
		if it.Kind != ScalarNode || !contains(onFailValues, it.Value) {
			msg := fmt.Sprintf("expected one of %s, got %s", quoteList(onFailValues), it.Describe())
			if it.Kind == ScalarNode {
				if sg := suggest(it.Value, onFailValues); sg != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", sg)
				}
			}
			d.errorf(it.Pos, ip, "%s", msg)
			continue
		}
		*l = append(*l, it.Value)
	}
}

// MarshalYAML writes the step in full syntax, so that it loads back unchanged.
func (s Step) MarshalYAML() (any, error) {
	var body yaml.MapSlice
	add := func(k string, v any) { body = append(body, yaml.MapItem{Key: k, Value: v}) }
	switch s.Type {
	case StepExec:
		add("arguments", s.Args)
	case StepCall:
		if s.Plugin != "" {
			add("plugin", s.Plugin)
		}
		add("action", s.Action)
		if len(s.Params) > 0 {
			add("arguments", s.Params)
		}
	case StepProbe:
		add("plugin", s.Plugin)
		add("action", s.Action)
		if len(s.Params) > 0 {
			add("arguments", s.Params)
		}
		if s.Seconds != DefaultProbeTimeout {
			add("timeout", s.Seconds)
		}
		if s.Logfile != "" {
			add("logfile", s.Logfile)
		}
	case StepGate:
		add("message", s.Message)
	case StepDelay:
		add("duration", s.Seconds)
	}
	if s.Label != "" {
		add("label", s.Label)
	}
	if len(s.OnFail) > 0 {
		add("on_fail", s.OnFail)
	}
	if s.Timeout != nil {
		add("timeout", *s.Timeout)
	}
	if s.Retries != nil {
		add("retries", *s.Retries)
	}
	return yaml.MapSlice{{Key: string(s.Type), Value: body}}, nil
}

// Describe is a short human description of the step, used as its default label.
func (s *Step) Describe() string {
	switch s.Type {
	case StepExec:
		return "exec " + strings.Join(s.Args, " ")
	case StepCall:
		if s.Plugin == "" {
			return "call " + s.Action
		}
		return "call " + s.Plugin + " " + s.Action + s.target()
	case StepProbe:
		return "probe " + s.Plugin + " " + s.Action + s.target()
	case StepGate:
		return "gate: " + s.Message
	case StepDelay:
		return "delay " + strconv.FormatFloat(s.Seconds, 'f', -1, 64) + "s"
	}
	return string(s.Type)
}

// target is the URL, address or command a call or probe is about.
func (s *Step) target() string {
	for _, k := range []string{"url", "address", "command"} {
		if v, ok := s.Params[k]; ok {
			return " " + fmt.Sprint(v)
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
