package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
)

func init() {
	RegisterList("echo", listFunc(echo))
	RegisterList("fail", listFunc(fail))
	RegisterList("exec", listFunc(execList))
	RegisterList("make", listFunc(makeList))
	RegisterList("delay", listFunc(delayList))
	RegisterList("gate", listFunc(gateList))
	RegisterList("http", listFunc(httpList))
	RegisterList("tcp", listFunc(tcpList))
}

type listFunc func(ctx context.Context, action string, s *Spec, env *Env, out io.Writer) error

func (f listFunc) Run(ctx context.Context, action string, s *Spec, env *Env, out io.Writer) error {
	return f(ctx, action, s, env, out)
}

// echo prints its arguments, for every action.
func echo(_ context.Context, _ string, s *Spec, _ *Env, out io.Writer) error {
	fmt.Fprintln(out, strings.Join(s.Args, " "))
	return nil
}

// fail prints its arguments as the failure and fails.
func fail(_ context.Context, _ string, s *Spec, _ *Env, out io.Writer) error {
	msg := strings.Join(s.Args, " ")
	if msg == "" {
		msg = "failed on purpose"
	}
	fmt.Fprintln(out, msg)
	return errors.New(msg)
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

func procEnv(env *Env) []string { return component.Environ(env.ProcessEnv, true) }

// execList runs a command in the component's folder.
func execList(ctx context.Context, action string, s *Spec, env *Env, out io.Writer) error {
	args, err := commands(action, s)
	if err != nil || len(args) == 0 {
		return err
	}
	if len(args) == 1 && strings.ContainsAny(args[0], " |&;$") {
		args = []string{"/bin/sh", "-c", args[0]}
	}
	return component.Run(ctx, component.Process{Args: args, Dir: env.Dir, Env: procEnv(env), Stdout: out, Stderr: out})
}

// makeList runs make with the given targets in the component's folder.
func makeList(ctx context.Context, action string, s *Spec, env *Env, out io.Writer) error {
	targets, err := commands(action, s)
	if err != nil || len(targets) == 0 {
		return err
	}
	return component.Run(ctx, component.Process{Args: append([]string{"make", "--no-print-directory"}, targets...), Dir: env.Dir, Env: procEnv(env), Stdout: out, Stderr: out})
}

// delayList waits its argument in seconds, whatever the action.
func delayList(ctx context.Context, _ string, s *Spec, _ *Env, _ io.Writer) error {
	if len(s.Args) != 1 {
		return errors.New("delay takes one argument, seconds")
	}
	secs, err := strconv.ParseFloat(s.Args[0], 64)
	if err != nil || secs <= 0 {
		return fmt.Errorf("delay %q: expected a positive number of seconds", s.Args[0])
	}
	t := time.NewTimer(time.Duration(secs * float64(time.Second)))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// gateList asks for approval, like the gate step.
func gateList(_ context.Context, action string, s *Spec, env *Env, _ io.Writer) error {
	msg := strings.Join(s.Args, " ")
	if msg == "" {
		msg = "go on with " + action + " of " + env.Component + "?"
	}
	a := env.Ask
	switch {
	case a != nil && a.Yes():
		a.Logf("gate %q approved by --yes", msg)
		return nil
	case a == nil || !a.Interactive():
		return fmt.Errorf("gate %q needs approval: run on a terminal to answer it, or pass --yes", msg)
	}
	var answer string
	err := a.Pause(func() error {
		a.Logf("%s [y/N]", msg)
		var err error
		answer, err = a.Input()
		return err
	})
	if err != nil {
		return err
	}
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(answer)), "y") {
		return nil
	}
	return fmt.Errorf("gate %q was not approved", msg)
}

// httpList waits on deploy until its URL answers 2xx or 3xx (5 minutes at
// most, or its second argument in seconds).
func httpList(ctx context.Context, action string, s *Spec, env *Env, out io.Writer) error {
	if action != ActionDeploy {
		return nil
	}
	if len(s.Args) == 0 {
		return errors.New("http takes a URL")
	}
	return waitBuiltin(ctx, "http", "get_wait", map[string]any{"url": s.Args[0]}, s, env, out)
}

// tcpList waits on deploy until its host:port accepts a connection.
func tcpList(ctx context.Context, action string, s *Spec, env *Env, out io.Writer) error {
	if action != ActionDeploy {
		return nil
	}
	if len(s.Args) == 0 {
		return errors.New("tcp takes host:port")
	}
	return waitBuiltin(ctx, "tcp", "connect_wait", map[string]any{"address": s.Args[0]}, s, env, out)
}

func waitBuiltin(ctx context.Context, name, action string, args map[string]any, s *Spec, env *Env, out io.Writer) error {
	timeout := 300 * time.Second
	if len(s.Args) > 1 {
		secs, err := strconv.ParseFloat(s.Args[1], 64)
		if err != nil || secs <= 0 {
			return fmt.Errorf("%s timeout %q: expected a positive number of seconds", name, s.Args[1])
		}
		timeout = time.Duration(secs * float64(time.Second))
	}
	p, _ := Lookup(name)
	if err := p.Validate(action, args); err != nil {
		return err
	}
	return p.Run(ctx, Call{Action: action, Args: args, Dir: env.Dir, Env: env.ProcessEnv, Output: out, Timeout: timeout})
}
