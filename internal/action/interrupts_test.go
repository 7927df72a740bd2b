package action

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
)

// TestCatchInterruptsSaysWhichSignal: the first interrupt cancels the run's
// context with a component.Interrupt naming the signal and when gantry got
// it — what tells a process that ended with status 0 as gantry got SIGTERM
// (which may have reached it too) from one that ended before — and the
// second closes the stop-now context.
func TestCatchInterruptsSaysWhichSignal(t *testing.T) {
	tests := []struct {
		name string
		sig  syscall.Signal
	}{
		{"SIGTERM", syscall.SIGTERM},
		{"SIGHUP", syscall.SIGHUP},
		{"Ctrl-C", syscall.SIGINT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			said := make(chan bool, 2)
			ctx, stop := catchInterrupts(context.Background(), func(second bool) { said <- second })
			defer stop()
			before := time.Now()
			if err := syscall.Kill(os.Getpid(), tt.sig); err != nil {
				t.Fatal(err)
			}
			<-ctx.Done()
			var in component.Interrupt
			if !errors.As(context.Cause(ctx), &in) {
				t.Fatalf("cause %v, want a component.Interrupt", context.Cause(ctx))
			}
			if in.Signal != tt.sig {
				t.Errorf("signal %v, want %v", in.Signal, tt.sig)
			}
			if in.At.Before(before) || in.At.After(time.Now()) {
				t.Errorf("received at %v, not between the kill (%v) and now", in.At, before)
			}
			if !errors.Is(ctx.Err(), context.Canceled) {
				t.Errorf("ctx.Err() = %v, want context.Canceled", ctx.Err())
			}
			if second := <-said; second {
				t.Error("the first interrupt was said as the second")
			}
			if err := syscall.Kill(os.Getpid(), tt.sig); err != nil {
				t.Fatal(err)
			}
			<-component.StopNow(ctx).Done()
			if second := <-said; !second {
				t.Error("the second interrupt was not said as the second")
			}
		})
	}
}
