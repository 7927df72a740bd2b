package plugin

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

func init() { register("http", httpPlugin{}) }

// httpPlugin probes URLs: get asks once, get_wait until the URL answers with
// 2xx or 3xx (redirects are not followed) or the timeout passes.
type httpPlugin struct{}

func (httpPlugin) Actions() []string { return []string{"get_wait", "get"} }

func (httpPlugin) Validate(action string, args map[string]any) error {
	if err := allowedArgs(args, "url", "interval", "status"); err != nil {
		return err
	}
	if _, err := stringArg(args, "url"); err != nil {
		return err
	}
	_, err := durationArg(args, "interval", time.Second)
	return err
}

var httpClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func (httpPlugin) Run(ctx context.Context, c Call) error {
	url, _ := stringArg(c.Args, "url")
	interval, _ := durationArg(c.Args, "interval", time.Second)
	try := func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode >= 400 {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		fmt.Fprintf(c.Output, "GET %s: %s\n", url, resp.Status)
		return nil
	}
	if c.Action == "get" {
		return try(ctx)
	}
	return waitLoop(ctx, c.Timeout, interval, try)
}
