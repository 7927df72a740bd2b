package plan

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// Defaults of ready conditions: how long to wait in all, and between attempts.
const (
	defaultReadyWait  = 300 * time.Second
	defaultReadyPause = time.Second
)

// readyStep waits until every ready condition holds (lifecycle.readyConditions):
// a URL answers 2xx or 3xx, a DNS name resolves. It logs each attempt, which
// is the live line of the display while it waits.
type readyStep struct {
	rt    *Runtime
	cr    *compRun // nil for the stack's conditions
	conds []manifest.ReadyCondition
}

func readyLabel(conds []manifest.ReadyCondition) string {
	var parts []string
	for _, c := range conds {
		if c.URL != "" {
			parts = append(parts, c.URL)
		} else {
			parts = append(parts, "dns "+c.DNS)
		}
	}
	return "ready: " + strings.Join(parts, ", ")
}

func (r readyStep) Run(ctx context.Context, env Env) Result {
	in := injected{rt: r.rt, cr: r.cr}
	for _, c := range r.conds {
		target := c.URL
		if target == "" {
			target = c.DNS
		}
		target, err := in.expand(target)
		if err != nil {
			return Fail(err)
		}
		wait, pause := defaultReadyWait, defaultReadyPause
		if c.WaitSeconds > 0 {
			wait = time.Duration(c.WaitSeconds) * time.Second
		}
		if c.PauseSeconds > 0 {
			pause = time.Duration(c.PauseSeconds) * time.Second
		}
		check := func(ctx context.Context) error { return checkDNS(ctx, target) }
		what := "dns " + target
		if c.URL != "" {
			check = func(ctx context.Context) error { return checkURL(ctx, target) }
			what = target
		}
		if err := waitReady(ctx, env, what, wait, pause, check); err != nil {
			return Fail(err)
		}
	}
	return Ok()
}

func waitReady(ctx context.Context, env Env, what string, wait, pause time.Duration, check func(context.Context) error) error {
	start := time.Now()
	deadline := start.Add(wait)
	for {
		attempt, cancel := context.WithDeadline(ctx, deadline)
		err := check(attempt)
		cancel()
		if err == nil {
			env.Logf("%s is ready", what)
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted while waiting for %s", what)
		}
		elapsed := time.Since(start).Round(time.Second)
		if time.Now().Add(pause).After(deadline) {
			return fmt.Errorf("%s not ready after %s: %v", what, wait, err)
		}
		env.Logf("waiting for %s (%s of %s): %v", what, elapsed, wait, err)
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("interrupted while waiting for %s", what)
		case <-t.C:
		}
	}
}

var readyClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func checkURL(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := readyClient.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		return fmt.Errorf("%s", resp.Status)
	}
	return nil
}

func checkDNS(ctx context.Context, name string) error {
	addrs, err := net.DefaultResolver.LookupHost(ctx, name)
	if err != nil {
		return err
	}
	if len(addrs) == 0 {
		return fmt.Errorf("no addresses")
	}
	return nil
}
