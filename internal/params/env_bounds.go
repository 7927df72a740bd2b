package params

import (
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// MaxEnvEntry is the longest NAME=value Linux passes to a process
// (MAX_ARG_STRLEN, 32 pages, less the terminating NUL: 131,071 bytes with
// 4 KiB pages); no bound elsewhere.
var MaxEnvEntry = maxEnvEntry()

// MaxEnvTotal is what Linux passes to a new process of arguments and
// environment together, each string with its NUL and a pointer (2 MiB with
// the usual 8 MiB stack); no bound elsewhere.
var MaxEnvTotal = maxEnvTotal()

// envReserve is room, beside the environment gantry inherits, for the
// variables it adds to a process's (GANTRY_STATE, COMPONENT_NAME, the
// run's mark…) and the command's arguments.
const envReserve = 64 << 10

// pointerSize is what each string of the environment costs besides itself.
const pointerSize = strconv.IntSize / 8

// inheritedEnv is what the environment gantry passes on takes of
// MaxEnvTotal, with envReserve.
var inheritedEnv = sync.OnceValue(func() int {
	n := envReserve
	for _, e := range os.Environ() {
		n += len(e) + 1 + pointerSize
	}
	return n
})

// EnvProblems are the component's exported values that Linux would not pass
// to its processes: one longer than a variable may be, or all of them
// together, with the environment gantry passes on, more than a process may
// get. exec would refuse them with "argument list too long", naming neither
// the parameters nor the bound. No size is said: the values may be secrets.
// Checked where a process will start (the plan, the component's step), not
// where the values are only shown.
func (e *Expanded) EnvProblems() manifest.Diagnostics {
	var diags manifest.Diagnostics
	total := inheritedEnv()
	for _, v := range e.Values {
		if !exported(v) {
			continue
		}
		entry := len(v.Env) + len("=") + len(Trimmed(v.Value))
		if entry > MaxEnvEntry {
			diags.Errorf(v.Pos, "", "component %s: parameter %q is exported as %s, and its value is longer than the %d bytes Linux passes in one environment variable: give it to the component in a file (a template) instead", e.Component, v.Name, v.Env, MaxEnvEntry)
		}
		total += entry + 1 + pointerSize
	}
	if total <= MaxEnvTotal || diags.HasErrors() {
		return diags // every plan and every begin step pass here: nothing kept
	}
	var names []string
	var at manifest.Pos
	for _, v := range e.Values {
		if exported(v) {
			if names == nil {
				at = v.Pos
			}
			names = append(names, v.Name)
		}
	}
	diags.Errorf(at, "", "component %s: its parameters exported to the environment (%s) do not fit, with the environment gantry passes on, in the %d bytes Linux passes to a process: give the larger ones to the component in a file (a template) instead",
		e.Component, strings.Join(names, ", "), MaxEnvTotal)
	return diags
}

// exported reports whether a value goes to the component's processes now.
func exported(v *Value) bool { return v.Env != "" && v.Pending == "" }
