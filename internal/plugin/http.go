package plugin

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

func init() { Register("http", httpPlugin{}, ForSteps) }

// httpPlugin probes URLs: get asks once, get_wait until the URL answers with
// 2xx or 3xx (redirects are not followed) or the timeout passes.
type httpPlugin struct{}

func (httpPlugin) Actions() []string { return []string{"get_wait", "get"} }

func (httpPlugin) Validate(action string, args map[string]any) error {
	if err := allowedArgs(args, "url", "interval"); err != nil {
		return err
	}
	if _, err := stringArg(args, "url"); err != nil {
		return err
	}
	_, err := intervalArg(args, "interval", time.Second)
	return err
}

var httpClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// StatusError is an answer whose status is not good enough: 4xx or 5xx for
// a probe, 5xx for a Hub ready condition.
type StatusError struct {
	URL    string
	Status string
}

func (e *StatusError) Error() string { return fmt.Sprintf("GET %s: %s", e.URL, e.Status) }

// GetOK asks url once and reports an answer of 4xx or 5xx as a *StatusError.
func GetOK(ctx context.Context, url string) (status string, err error) {
	return GetBelow(ctx, url, 400)
}

// GetBelow asks url once and reports an answer whose status code is limit or
// more as a *StatusError.
func GetBelow(ctx context.Context, url string, limit int) (status string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode >= limit {
		return "", &StatusError{URL: url, Status: resp.Status}
	}
	return resp.Status, nil
}

func (httpPlugin) Run(ctx context.Context, c *Call) error {
	url, _ := stringArg(c.Args, "url")
	interval, _ := intervalArg(c.Args, "interval", time.Second)
	try := func(ctx context.Context) error {
		status, err := GetOK(ctx, url)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.Stdout, "GET %s: %s\n", url, status)
		return nil
	}
	if c.Action == "get" {
		return try(ctx)
	}
	return Wait(ctx, c.Timeout, interval, try, c.Attempt)
}
