package plugin

import (
	"context"
	"fmt"
	"net"
	"time"
)

func init() { Register("tcp", tcpPlugin{}, ForSteps) }

// tcpPlugin probes TCP addresses: connect tries once, connect_wait until a
// connection is accepted or the timeout passes.
type tcpPlugin struct{}

func (tcpPlugin) Actions() []string { return []string{"connect_wait", "connect"} }

func (tcpPlugin) Validate(action string, args map[string]any) error {
	if err := allowedArgs(args, "address", "interval"); err != nil {
		return err
	}
	addr, err := stringArg(args, "address")
	if err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("argument \"address\" must be host:port, got %q", addr)
	}
	_, err = intervalArg(args, "interval", time.Second)
	return err
}

func (tcpPlugin) Run(ctx context.Context, c *Call) error {
	addr, _ := stringArg(c.Args, "address")
	interval, _ := intervalArg(c.Args, "interval", time.Second)
	try := func(ctx context.Context) error {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		conn.Close()
		fmt.Fprintf(c.Stdout, "connected to %s\n", addr)
		return nil
	}
	if c.Action == "connect" {
		return try(ctx)
	}
	return Wait(ctx, c.Timeout, interval, try, c.Attempt)
}
