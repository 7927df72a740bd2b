package ui

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// BenchmarkDisplay feeds the events of a run of 1,000 components (begin,
// verb with two lines of output, end; 8 at once) to the tracker and a
// display writing to io.Discard: the plain lines, or the live display
// drawing its frames ten times a second meanwhile. What a display costs a
// run per component is its ns/op / 1,000.
func BenchmarkDisplay(b *testing.B) {
	const n = 1000
	p := livePlan(n, false)
	for _, name := range []string{"plain", "tty"} {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				tracker := NewTracker(p)
				var obs Multi
				var tty *TTY
				if name == "tty" {
					tty = NewTTY(io.Discard, Style{Color: true}, tracker, func() (int, int) { return 120, 40 }, TTYOptions{})
					tty.Start()
					obs = Multi{tracker, tty}
				} else {
					obs = Multi{tracker, NewPlain(io.Discard, Style{Color: true})}
				}
				now := time.Now()
				for i := 0; i < n; i += 8 {
					for j := i; j < min(i+8, n); j++ {
						c := fmt.Sprintf("c%02d", j)
						obs.StepStarted(p.Node(c+"/begin"), now)
						obs.StepFinished(p.Node(c+"/begin"), plan.Ok(), now, now)
						obs.StepStarted(p.Node(c+"/deploy"), now)
						obs.Log(p.Node(c+"/deploy"), "installing "+c, time.Now())
						obs.Log(p.Node(c+"/deploy"), "done", time.Now())
					}
					for j := i; j < min(i+8, n); j++ {
						c := fmt.Sprintf("c%02d", j)
						obs.StepFinished(p.Node(c+"/deploy"), plan.Ok(), now, now)
						obs.StepStarted(p.Node(c+"/end"), now)
						obs.StepFinished(p.Node(c+"/end"), plan.Ok(), now, now)
					}
					Idle(obs[1])
				}
				if tty != nil {
					tty.Stop()
				}
			}
		})
	}
}
