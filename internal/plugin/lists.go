package plugin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/internal/component"
)

func init() {
	Register("echo", listOnly(echo), ForLists)
	Register("fail", listOnly(fail), ForLists)
	Register("make", listOnly(makeEntry), ForLists)
}

// listOnly is a plugin of plugin lists only: call and probe steps cannot
// name it.
type listOnly func(ctx context.Context, c *Call) error

func (listOnly) Actions() []string { return nil }

func (listOnly) Validate(string, map[string]any) error {
	return errors.New("this plugin serves plugin lists only")
}

func (f listOnly) Run(ctx context.Context, c *Call) error {
	if c.Entry == nil {
		return errors.New("this plugin serves plugin lists only")
	}
	return f(ctx, c)
}

// echo prints its arguments, for every action.
func echo(_ context.Context, c *Call) error {
	fmt.Fprintln(c.Stdout, strings.Join(c.Entry.Args, " "))
	return nil
}

// fail prints its arguments as the failure and fails.
func fail(_ context.Context, c *Call) error {
	msg := strings.Join(c.Entry.Args, " ")
	if msg == "" {
		msg = "failed on purpose"
	}
	fmt.Fprintln(c.Stdout, msg)
	return errors.New(msg)
}

// makeEntry runs make with the given targets in the component's folder.
func makeEntry(ctx context.Context, c *Call) error {
	targets, err := commands(c.Action, c.Entry)
	if err != nil || len(targets) == 0 {
		return err
	}
	return component.Run(ctx, component.Process{Args: append([]string{"make", "--no-print-directory"}, targets...), Dir: c.Dir, Env: c.Env, Stdout: c.Stdout, Stderr: c.Stderr})
}
