package plugin

import (
	"context"
	"fmt"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
)

func init() { register("exec", execPlugin{}) }

// execPlugin runs a shell command: run once, run_wait until it exits 0 or the
// timeout passes.
type execPlugin struct{}

func (execPlugin) Actions() []string { return []string{"run", "run_wait"} }

func (execPlugin) Validate(action string, args map[string]any) error {
	if err := allowedArgs(args, "command", "interval"); err != nil {
		return err
	}
	if _, err := stringArg(args, "command"); err != nil {
		return err
	}
	_, err := durationArg(args, "interval", time.Second)
	return err
}

func (execPlugin) Run(ctx context.Context, c Call) error {
	command, _ := stringArg(c.Args, "command")
	interval, _ := durationArg(c.Args, "interval", time.Second)
	try := func(ctx context.Context) error {
		err := component.Run(ctx, component.Process{Args: []string{"/bin/sh", "-c", command}, Dir: c.Dir, Env: c.Env, Stdout: c.Output, Stderr: c.Output, Grace: 2 * time.Second})
		if err != nil {
			return fmt.Errorf("%s: %w", command, err)
		}
		return nil
	}
	if c.Action == "run" {
		if c.Timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.Timeout)
			defer cancel()
		}
		return try(ctx)
	}
	return waitLoop(ctx, c.Timeout, interval, try)
}
