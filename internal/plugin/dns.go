package plugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

func init() { Register("dns", dnsPlugin{}, ForSteps) }

// dnsPlugin probes names: resolve looks a name up once, resolve_wait until it
// resolves or the timeout passes (ready conditions' dns).
type dnsPlugin struct{}

func (dnsPlugin) Actions() []string { return []string{"resolve_wait", "resolve"} }

func (dnsPlugin) Validate(action string, args map[string]any) error {
	if err := allowedArgs(args, "name", "interval"); err != nil {
		return err
	}
	if _, err := stringArg(args, "name"); err != nil {
		return err
	}
	_, err := intervalArg(args, "interval", time.Second)
	return err
}

func (dnsPlugin) Run(ctx context.Context, c *Call) error {
	name, _ := stringArg(c.Args, "name")
	interval, _ := intervalArg(c.Args, "interval", time.Second)
	try := func(ctx context.Context) error {
		addrs, err := net.DefaultResolver.LookupHost(ctx, name)
		if err != nil {
			return err
		}
		if len(addrs) == 0 {
			return errors.New("no addresses")
		}
		fmt.Fprintf(c.Stdout, "%s resolves to %s\n", name, addrs[0])
		return nil
	}
	if c.Action == "resolve" {
		return try(ctx)
	}
	return Wait(ctx, c.Timeout, interval, try, c.Attempt)
}
