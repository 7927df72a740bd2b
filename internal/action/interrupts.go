package action

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
)

// Interrupts a run stops on: Ctrl-C, a terminal that closed, a kill.
var interruptSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// catchInterrupts handles the interrupts of a run: the first cancels ctx —
// running steps stop, their process groups get SIGTERM and a grace period,
// the rest of the plans is skipped but what records the outcome — and the
// second kills what still runs at once (component.WithStopNow). said hears
// of each (second is true for the second). The returned function stops
// catching them.
func catchInterrupts(ctx context.Context, said func(second bool)) (context.Context, func()) {
	ctx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(nil) }
	// Not derived from ctx: processes run under a context that is never
	// cancelled must still stop at the second interrupt.
	now, stopNow := context.WithCancel(context.Background())
	ctx = component.WithStopNow(ctx, now)
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, interruptSignals...)
	// A reader of gantry's output that goes away (gantry deploy | head)
	// must not end a run halfway: with SIGPIPE notified, a write to the
	// closed pipe fails (EPIPE) instead of killing gantry, and the run goes
	// on to its end, its logs and state written. Never stopped: the summary
	// after the run writes too. (A handled signal is not inherited:
	// components get SIGPIPE's default.)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	done := make(chan struct{})
	go func() {
		count := 0
		for {
			select {
			case <-done:
				return
			case sig := <-signals:
				at := time.Now() // before anything else: a process's end is weighed against it
				count++
				switch count {
				case 1:
					// The cause says which signal: a process that ends
					// with status 0 after gantry got SIGTERM may have
					// got it too (component.StoppedError).
					cancelCause(component.Interrupt{Signal: sig, At: at})
				case 2:
					stopNow()
				}
				if said != nil && count <= 2 {
					said(count == 2)
				}
			}
		}
	}()
	return ctx, func() {
		signal.Stop(signals)
		close(done)
		cancel()
		stopNow()
	}
}
