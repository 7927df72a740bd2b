package ui

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// livePlan is a plan of n components, each with begin, verb and end; the
// component i > 0 runs after component i-1 when chained.
func livePlan(n int, chained bool) *plan.Plan {
	p := plan.New("wide", plan.VerbDeploy)
	for i := 0; i < n; i++ {
		c := fmt.Sprintf("c%02d", i)
		info := &plan.Component{Name: c, Verb: plan.VerbDeploy}
		if chained && i > 0 {
			info.After = []string{fmt.Sprintf("c%02d", i-1)}
		}
		p.Components[c] = info
		p.Add(&plan.Node{ID: c + "/begin", Kind: plan.KindBegin, Label: c + ": prepare", Component: c, Group: c, Hidden: true, Critical: i != 3})
		p.Add(&plan.Node{ID: c + "/deploy", Kind: plan.KindComponent, Label: "deploy " + c, Component: c, Group: c, Verb: plan.VerbDeploy, Critical: i != 3})
		p.Add(&plan.Node{ID: c + "/end", Kind: plan.KindEnd, Label: c + ": done", Component: c, Group: c, Hidden: true, Critical: i != 3})
	}
	return p
}

// frameOf draws one frame of the live area and returns its lines, without
// the lines printed above it.
func frameOf(t *testing.T, tty *TTY) []string {
	t.Helper()
	var buf bytes.Buffer
	tty.w = &buf
	tty.drawn = nil
	tty.render(true)
	out := strings.TrimSuffix(strings.ReplaceAll(buf.String(), eraseLine, "\n"), "\n")
	if out == "" {
		return nil
	}
	lines := strings.Split(out, "\n")
	return lines[len(lines)-len(tty.drawn):]
}

// TestLiveAreaFitsTheTerminal runs 30 components, 20 at once, and draws
// the live area in terminals of several heights: it never takes more rows
// than it may (two thirds of the height, one less than the terminal), no
// line is wider than the terminal, the header counts every state, and what
// does not fit is counted. With ShowQueue the components waiting are
// listed with what they wait for.
func TestLiveAreaFitsTheTerminal(t *testing.T) {
	for _, tt := range []struct {
		name          string
		width, height int
		queue         bool
		want          []string // regular expressions, one per line, in order
	}{
		{"60x15", 60, 15, false, []string{
			`^5/30 done · 20 running · 4 waiting · 1 failed · \d+ms · d\S*…$`,
			`^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] c06  \d+ms  step 6$`,
			`^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] c07  \d+ms  deploy c07$`,
			`c08`, `c09`, `c10`, `c11`, `c12`, `c13`,
			`^  \+12 more running$`,
		}},
		{"60x15 with the queue", 60, 15, true, []string{
			`^5/30 done · 20 running · 4 waiting · 1 failed · `,
			`c06`, `c07`, `c08`, `c09`, `c10`,
			`^  \+15 more running$`,
			`^· c26  after c25$`, `^· c27  after c26$`,
			`^  \+2 more waiting$`,
		}},
		{"a tall terminal shows them all", 200, 60, true, append(append([]string{`^5/30 done `}, nums(6, 26)...), `^· c26  after c25$`, `c27`, `c28`, `^· c29  after c28$`)},
		{"3 rows", 60, 3, false, []string{`^5/30 done `, `^  \+20 more running$`}},
		{"1 row: nothing", 60, 1, false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := livePlan(30, true)
			tracker := NewTracker(p)
			tty := NewTTY(nil, Style{}, tracker, func() (int, int) { return tt.width, tt.height }, TTYOptions{ShowQueue: tt.queue})
			tty.start = time.Now()
			now := time.Now()
			for i := 0; i < 26; i++ {
				c := fmt.Sprintf("c%02d", i)
				obs := Multi{tracker, tty}
				obs.StepStarted(p.Node(c+"/begin"), now)
				obs.StepFinished(p.Node(c+"/begin"), plan.Ok(), now, now)
				obs.StepStarted(p.Node(c+"/deploy"), now)
				if i == 6 {
					obs.Log(p.Node(c+"/deploy"), "step 6", time.Now())
				}
				if i < 6 {
					r := plan.Ok()
					end := plan.Ok()
					if i == 3 {
						r, end = plan.Fail(fmt.Errorf("broken")), plan.Skip(plan.CauseUpstream, "c03 failed")
					}
					obs.StepFinished(p.Node(c+"/deploy"), r, now, now)
					obs.StepFinished(p.Node(c+"/end"), end, now, now)
				}
			}
			got := frameOf(t, tty)
			if len(got) > max(0, min(max(tt.height*2/3, 3), tt.height-1)) {
				t.Errorf("%d rows in a terminal of %d:\n%s", len(got), tt.height, strings.Join(got, "\n"))
			}
			for _, l := range got {
				if Width(l) >= tt.width {
					t.Errorf("a line of %d columns in a terminal of %d: %q", Width(l), tt.width, l)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("frame:\n%s\nwant %d lines", strings.Join(got, "\n"), len(tt.want))
			}
			for i, re := range tt.want {
				if !regexp.MustCompile(re).MatchString(got[i]) {
					t.Errorf("line %d: %q does not match %q", i, got[i], re)
				}
			}
		})
	}
}

func nums(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf(` c%02d  `, i))
	}
	return out
}

// TestTTYFinishedLines: the lines printed above the live area say how each
// component ended, a tolerated failure as "failed (optional)"; a step of
// the stack shows its label as the run expanded it.
func TestTTYFinishedLines(t *testing.T) {
	p := livePlan(4, false)
	flight := &plan.Node{ID: "pre-flight/0", Kind: plan.KindExec, Label: "exec ./check ${dns.domain}", Group: "pre-flight",
		Spec: plan.Injected{Point: "pre_flight", Step: plan.Step{Type: "exec"}}}
	p.Add(flight)
	tracker := NewTracker(p)
	var buf bytes.Buffer
	tty := NewTTY(&buf, Style{}, tracker, func() (int, int) { return 100, 30 }, TTYOptions{})
	obs := Multi{tracker, tty}
	now := time.Now()
	obs.StepStarted(flight, now)
	obs.Note(flight, plan.Note{Kind: plan.NoteLabel, Value: "exec ./check example.com"})
	obs.StepFinished(flight, plan.Ok(), now, now)
	for i, r := range []plan.Result{plan.Ok(), plan.Fail(fmt.Errorf("exit 2")), plan.Skip(plan.CauseUpstream, "c01 failed"), plan.Fail(fmt.Errorf("exit 3"))} {
		c := fmt.Sprintf("c%02d", i)
		if r.Status != plan.Skipped {
			obs.StepStarted(p.Node(c+"/deploy"), now)
		}
		obs.StepFinished(p.Node(c+"/deploy"), r, now, now.Add(time.Second))
		end := plan.Ok()
		if r.Status != plan.OK {
			end = plan.Skip(plan.CauseUpstream, c+" failed")
		}
		obs.StepFinished(p.Node(c+"/end"), end, now, now.Add(time.Second))
	}
	tty.Stop()
	out := strings.ReplaceAll(buf.String(), eraseLine, "\n")
	for _, re := range []string{
		`(?m)^✓ pre-flight: exec ./check example.com `,
		`(?m)^✓ c00 +deployed +1.0s$`,
		`(?m)^✗ c01 +failed +1.0s  exit 2$`,
		`(?m)^- c02 +skipped +c01 failed$`,
		`(?m)^✗ c03 +failed \(optional\) 1.0s  exit 3$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("no line matches %q in:\n%s", re, out)
		}
	}
}

// TestTTYPrintAndInterrupted: lines of gantry's own given to Print come
// above the live area at the next frame, once, never inside it; after an
// interrupt the header says the run is stopping and what another
// interrupt does; after Stop, Print writes at once.
func TestTTYPrintAndInterrupted(t *testing.T) {
	for _, tc := range []struct {
		name       string
		interrupts []bool // the second flag of each interrupt
		header     string // a regular expression
	}{
		{"running", nil, `^0/2 done · 1 running · 1 waiting · 0 failed · \d+ms · deploy wide$`},
		{"interrupted", []bool{false}, `^0/2 done · 1 running · 1 waiting · 0 failed · \d+ms · stopping \(interrupt again to stop at once\) · deploy wide$`},
		{"interrupted twice", []bool{false, true}, `^0/2 done · 1 running · 1 waiting · 0 failed · \d+ms · stopping every process now · deploy wide$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := livePlan(2, true)
			tracker := NewTracker(p)
			tty := NewTTY(nil, Style{}, tracker, func() (int, int) { return 200, 20 }, TTYOptions{})
			tty.start = time.Now()
			Multi{tracker, tty}.StepStarted(p.Node("c00/deploy"), time.Now())
			frameOf(t, tty)
			tty.Print("gantry: a warning")
			for _, second := range tc.interrupts {
				tty.Interrupted(second)
			}
			var buf bytes.Buffer
			tty.w = &buf
			tty.render(true)
			// Up over the live area drawn last, the line, the live area,
			// erased below.
			out := strings.Split(strings.ReplaceAll(buf.String(), eraseLine, "\n"), "\n")
			if len(out) != 4 || out[0] != "\r\x1b[2Agantry: a warning" || out[3] != "\x1b[J" {
				t.Fatalf("the frame is not the line above the live area, then the live area:\n%q", out)
			}
			if !regexp.MustCompile(tc.header).MatchString(out[1]) {
				t.Errorf("header %q does not match %q", out[1], tc.header)
			}
			if again := frameOf(t, tty); strings.Contains(strings.Join(again, "\n"), "a warning") {
				t.Errorf("the line is printed again in the next frame: %q", again)
			}
			buf.Reset()
			tty.w = &buf
			tty.Stop()
			tty.Print("gantry: after the end")
			if !strings.HasSuffix(buf.String(), "\x1b[?25hgantry: after the end\n") {
				t.Errorf("a line printed after Stop is not written at once after the last frame: %q", buf.String())
			}
		})
	}
}

// TestDetail: the live line of a running component says its verb's last
// line, or another step's label with its last line, the label's words
// once when the line repeats them (a gate's question).
func TestDetail(t *testing.T) {
	for _, tc := range []struct {
		name          string
		current, last string
		verbStep      bool
		want          string
	}{
		{"no line yet", "probe tcp connect_wait db:5432", "", false, "probe tcp connect_wait db:5432"},
		{"the verb's line", "deploy db", "migrating", true, "migrating"},
		{"a step with its line", "probe tcp connect_wait db:5432", "attempt 2 failed", false, "probe tcp connect_wait db:5432: attempt 2 failed"},
		{"a gate's question", "gate: Migrate the database now?", "Migrate the database now? [y/N]", false, "gate: Migrate the database now? [y/N]"},
		{"a gate's other line", "gate: Migrate the database now?", "approved", false, "gate: Migrate the database now?: approved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &ComponentRun{Current: tc.current, LastLine: tc.last, verbStep: tc.verbStep}
			if got := c.Detail(); got != tc.want {
				t.Errorf("Detail() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestTTYAskingStepAlone: while a step asks something, the display prints
// only the lines of the asking step's group, and holds back the lines to
// print above the live area (a component that finished) until the answer,
// so that the question stays the last line.
func TestTTYAskingStepAlone(t *testing.T) {
	p := livePlan(2, false)
	tracker := NewTracker(p)
	var buf bytes.Buffer
	tty := NewTTY(&buf, Style{}, tracker, func() (int, int) { return 100, 20 }, TTYOptions{})
	obs := Multi{tracker, tty}
	now := time.Now()
	asker, other := p.Node("c00/deploy"), p.Node("c01/deploy")
	obs.StepStarted(asker, now)
	obs.StepStarted(other, now)
	tty.Paused(true)
	obs.Note(asker, plan.Note{Kind: plan.NoteAsking})
	obs.Log(asker, "Proceed? [y/N]", time.Now())
	obs.Log(other, "busy line", time.Now())
	obs.StepFinished(other, plan.Ok(), now, now)
	obs.StepFinished(p.Node("c01/end"), plan.Ok(), now, now)
	tty.render(true)
	paused := buf.String()
	if !strings.HasSuffix(paused, "[c00] Proceed? [y/N]\n") {
		t.Errorf("the question is not the last line while it waits: %q", paused)
	}
	if strings.Contains(paused, "busy line") || strings.Contains(paused, "c01 ") {
		t.Errorf("another component's lines printed while a step asks: %q", paused)
	}
	tty.Paused(false)
	if !regexp.MustCompile(`(?m)^✓ c01 +deployed`).MatchString(buf.String()[len(paused):]) {
		t.Errorf("the line held back is not printed after the answer: %q", buf.String()[len(paused):])
	}
	if strings.Contains(buf.String(), "busy line") {
		t.Errorf("another component's output line printed: %q", buf.String())
	}
}

// TestTTYFailureWhileAsking: while a step asks, another component's failure
// and gantry's own warnings are printed at once, with the question again
// below them, so that the person deciding knows the run already failed;
// lines that can wait (a component deployed, -v logs) come after the answer.
func TestTTYFailureWhileAsking(t *testing.T) {
	p := livePlan(3, false)
	tracker := NewTracker(p)
	var buf bytes.Buffer
	tty := NewTTY(&buf, Style{}, tracker, func() (int, int) { return 100, 20 }, TTYOptions{})
	obs := Multi{tracker, tty}
	now := time.Now()
	asker, broken, fine := p.Node("c00/deploy"), p.Node("c01/deploy"), p.Node("c02/deploy")
	for _, n := range []*plan.Node{asker, broken, fine} {
		obs.StepStarted(n, now)
	}
	tty.Paused(true)
	obs.Note(asker, plan.Note{Kind: plan.NoteAsking})
	obs.Log(asker, "Migrate the database now? [y/N]", time.Now())
	obs.StepFinished(fine, plan.Ok(), now, now)
	obs.StepFinished(p.Node("c02/end"), plan.Ok(), now, now)
	tty.PrintLog("DBG process ended")
	tty.render(true)
	if got := strings.TrimPrefix(buf.String(), "\x1b[?25h"); got != "[c00] Migrate the database now? [y/N]\n" {
		t.Errorf("lines that can wait printed while a step asks: %q", got)
	}
	obs.StepFinished(broken, plan.Fail(fmt.Errorf("exit 1")), now, now)
	obs.StepFinished(p.Node("c01/end"), plan.Skip(plan.CauseUpstream, "c01 failed"), now, now)
	tty.Print("gantry: warning: the output keeper ended")
	buf.Reset()
	tty.render(true)
	got := strings.Split(strings.TrimSuffix(strings.ReplaceAll(buf.String(), eraseLine, "\n"), "\n"), "\n")
	if len(got) != 3 || !regexp.MustCompile(`^✗ c01 +failed`).MatchString(got[0]) ||
		got[1] != "gantry: warning: the output keeper ended" || got[2] != "[c00] Migrate the database now? [y/N]" {
		t.Errorf("while a step asks, want the failure, the warning, then the question again; got %q", got)
	}
	buf.Reset()
	tty.Paused(false)
	after := buf.String()
	if !regexp.MustCompile(`(?m)^✓ c02 +deployed`).MatchString(after) || !strings.Contains(after, "DBG process ended") {
		t.Errorf("the lines held back are not printed after the answer: %q", after)
	}
	if strings.Contains(after, "c01") {
		t.Errorf("the failure printed twice: %q", after)
	}
}
