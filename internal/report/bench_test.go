package report

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/ui"
)

// bigRun writes the folder of a run of n components in a random DAG (each
// after up to 3 earlier ones), each logging a few lines and printing an
// output, through the observers a run writes its folder with.
func bigRun(b testing.TB, n int) (string, *plan.Plan) {
	dir, p, _ := bigRunHeard(b, n)
	return dir, p
}

// bigRunHeard is bigRun, with its logs and events as the run's collectors
// heard them.
func bigRunHeard(b testing.TB, n int) (string, *plan.Plan, *Heard) {
	b.Helper()
	r := rand.New(rand.NewSource(1))
	p := plan.New("big", plan.VerbDeploy)
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("c%04d", i)
		c := names[i]
		p.Add(&plan.Node{ID: c + "/begin", Kind: plan.KindBegin, Component: c, Group: c, Hidden: true, Critical: true, Spec: plan.Begin{Component: c}})
		p.Add(&plan.Node{ID: c + "/deploy", Kind: plan.KindComponent, Label: "deploy " + c, Component: c, Group: c, Action: "deploy", Critical: true, Spec: plan.Verb{Component: c, Verb: "deploy"}})
		p.Add(&plan.Node{ID: c + "/end", Kind: plan.KindEnd, Component: c, Group: c, Hidden: true, Critical: true, Spec: plan.End{Component: c}})
		must(p.Connect(c+"/begin", c+"/deploy", plan.OnSuccess))
		must(p.Connect(c+"/deploy", c+"/end", plan.OnComplete))
		info := &plan.Component{Name: c, Verb: "deploy", Action: "deploy"}
		seen := map[int]bool{}
		for k := 0; i > 0 && k < 1+r.Intn(3); k++ {
			if j := r.Intn(i); !seen[j] {
				seen[j] = true
				info.After = append(info.After, names[j])
				must(p.Connect(names[j]+"/end", c+"/begin", plan.OnSuccess))
			}
		}
		info.Depends = info.After
		p.Components[c] = info
	}
	dir := filepath.Join(b.TempDir(), "run")
	runLog, err := ui.NewRunLog(dir)
	heard := NewLogCollector()
	runLog.Tap(heard)
	must(err)
	f, err := os.Create(filepath.Join(dir, EventsFile))
	must(err)
	events := ui.NewEvents(f, "run")
	heardEv := NewEventCollector()
	events.Tap(heardEv)
	tracker := ui.NewTracker(p)
	obs := ui.Masked{Masker: secret.NewMasker(), Next: ui.Multi{tracker, runLog, events}}
	t0 := time.Now()
	events.Emit(ui.Event{Time: t0, Event: "run_started", Stack: p.Stack, Verb: p.Verb, Components: ui.Components(tracker.Components())})
	// The steps' times first, then their events in the order of those
	// times, as the executor gives them.
	type fed struct {
		at, started time.Time
		n           *plan.Node
		start       bool
	}
	var feed []fed
	end := map[string]time.Time{}
	for _, c := range names {
		start := t0
		for _, up := range p.Components[c].After {
			if end[up].After(start) {
				start = end[up]
			}
		}
		at := start.Add(time.Duration(r.Intn(5)) * time.Millisecond)
		for _, id := range []string{c + "/begin", c + "/deploy", c + "/end"} {
			n := p.Node(id)
			took := time.Millisecond
			if n.Kind == plan.KindComponent {
				took = time.Duration(10+r.Intn(90)) * time.Millisecond
			}
			feed = append(feed, fed{at, at, n, true}, fed{at.Add(took), at, n, false})
			at = at.Add(took)
		}
		end[c] = at
	}
	sort.SliceStable(feed, func(i, j int) bool { return feed[i].at.Before(feed[j].at) })
	var now time.Time
	events.SetClock(func() time.Time { return now })
	for i, f := range feed {
		n, c := f.n, f.n.Component
		now = f.at
		switch {
		case !f.start:
			obs.StepFinished(n, plan.Ok(), f.started, f.at)
		default:
			obs.StepStarted(n, f.at)
			if n.Kind == plan.KindComponent {
				for k := 0; k < 4; k++ {
					obs.Log(n, fmt.Sprintf("%s: line %d of its work", c, k), time.Now())
				}
				obs.Note(n, plan.Note{Kind: plan.NoteOutput, Name: c + ".url", Value: "http://" + c})
			}
		}
		if i%600 == 0 {
			runLog.Idle()
		}
	}
	events.Emit(ui.Event{Event: "run_finished", Stack: p.Stack, Verb: p.Verb, Status: "ok", Components: ui.Components(tracker.Components())})
	events.Flush()
	must(f.Close())
	must(runLog.Close())
	pf, err := os.Create(filepath.Join(dir, PlanFile))
	must(err)
	bw := bufio.NewWriter(pf)
	must(p.EncodeJSON(bw, false))
	must(bw.Flush())
	must(pf.Close())
	return dir, p, &Heard{Logs: heard, Events: heardEv}
}

// BenchmarkWriteRun1000 is what a run of 1,000 components adds at its end:
// its report, from its folder and the plan at hand.
func BenchmarkWriteRun1000(b *testing.B) {
	b.Run("read", func(b *testing.B) { benchmarkWriteRun(b, false, nil) })
	b.Run("heard", func(b *testing.B) { benchmarkWriteRun(b, true, nil) })
	// A run that knows a secret masks what it heard again at its end.
	b.Run("heard-remasked", func(b *testing.B) { benchmarkWriteRun(b, true, secret.NewMasker("s3cret-value-of-the-run")) })
}

// benchmarkWriteRun writes the report of a run of 1,000 components, with
// the logs and events read from the files or as the run heard them, masked
// again with masker when it is not nil.
func benchmarkWriteRun(b *testing.B, useHeard bool, masker *secret.Masker) {
	dir, p, heard := bigRunHeard(b, 1000)
	if !useHeard {
		heard = nil
	} else if masker != nil {
		heard.Mask = masker.Text
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if heard != nil {
			// The plan's part is worked out while the run goes on.
			b.StopTimer()
			heard.Plan = PreparePlan(p)
			<-heard.Plan.done
			b.StartTimer()
		}
		if _, err := WriteRun(dir, p, heard); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if fi, err := os.Stat(filepath.Join(dir, ReportFile)); err == nil {
		b.ReportMetric(float64(fi.Size())/1e6, "MB")
	}
}

// BenchmarkLoadRun1000 is gantry report's reading of a run of 1,000
// components, its plan read back from plan.json.
func BenchmarkLoadRun1000(b *testing.B) {
	dir, _ := bigRun(b, 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := LoadRun(dir); err != nil {
			b.Fatal(err)
		}
	}
}
