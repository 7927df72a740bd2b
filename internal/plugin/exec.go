package plugin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
)

func init() { Register("exec", execPlugin{}, ForSteps|ForLists) }

// execPlugin runs commands. For call and probe steps it runs a shell
// command: run once, run_wait until it exits 0 or the timeout passes. In
// plugin lists it runs the entry's arguments (or config deploy) on deploy,
// and config delete, prepare or cleanup for those actions.
type execPlugin struct{}

func (execPlugin) Actions() []string { return []string{"run", "run_wait"} }

func (execPlugin) Validate(action string, args map[string]any) error {
	if err := allowedArgs(args, "command", "interval"); err != nil {
		return err
	}
	if _, err := stringArg(args, "command"); err != nil {
		return err
	}
	_, err := intervalArg(args, "interval", time.Second)
	return err
}

func (execPlugin) Run(ctx context.Context, c *Call) error {
	if c.Entry != nil {
		return execEntry(ctx, c)
	}
	command, _ := stringArg(c.Args, "command")
	interval, _ := intervalArg(c.Args, "interval", time.Second)
	try := func(ctx context.Context) error {
		err := component.Run(ctx, component.Process{Args: []string{"/bin/sh", "-c", command}, Dir: c.Dir, Env: c.Env, Stdout: c.Stdout, Stderr: c.Stderr, Grace: 2 * time.Second})
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
	return Wait(ctx, c.Timeout, interval, try, c.Attempt)
}

// execEntry runs an exec entry of a plugin list in the component's folder.
func execEntry(ctx context.Context, c *Call) error {
	args, err := commands(c.Action, c.Entry)
	if err != nil || len(args) == 0 {
		return err
	}
	if len(args) == 1 && strings.ContainsAny(args[0], " |&;$") {
		args = []string{"/bin/sh", "-c", args[0]}
	}
	return component.Run(ctx, component.Process{Args: args, Dir: c.Dir, Env: c.Env, Stdout: c.Stdout, Stderr: c.Stderr})
}

// commands returns what exec and make run for an action: the arguments (or
// config "deploy") on deploy, config "delete" (or nothing) on delete, config
// "prepare" and "cleanup" likewise. Running a deploy command again on delete
// would undo nothing, so delete needs its own.
func commands(action string, s *Spec) ([]string, error) {
	m, _ := s.Config.(map[string]any)
	if v, ok := m[action]; ok {
		switch x := v.(type) {
		case string:
			return []string{x}, nil
		case []any:
			out := make([]string, len(x))
			for i, a := range x {
				out[i] = fmt.Sprint(a)
			}
			return out, nil
		}
		return nil, fmt.Errorf("config %s: expected a command or a list of arguments", action)
	}
	if action == ActionDeploy && len(s.Args) > 0 {
		return s.Args, nil
	}
	return nil, nil
}
