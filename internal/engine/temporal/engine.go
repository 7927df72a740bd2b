package temporal

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"

	"github.com/gantry-dev/gantry/internal/action"
)

func init() {
	action.RegisterEngine(func(location string) (action.Engine, error) { return Open(location) }, "temporal")
}

// Engine is a Temporal server and namespace that runs plans: the client
// side (Run) and the worker side (Work).
type Engine struct {
	location  string
	hostPort  string
	namespace string
	queue     string
	tls       *tls.Config
}

// Open reads an engine's location:
// temporal://HOST:PORT/NAMESPACE[?tls=true&ca=FILE&cert=FILE&key=FILE&server-name=NAME&queue=NAME].
func Open(location string) (*Engine, error) {
	bad := func(format string, args ...any) (*Engine, error) {
		return nil, &action.InvalidError{Err: fmt.Errorf("--engine %s: "+format, append([]any{location}, args...)...), Consequence: "nothing was run"}
	}
	u, err := url.Parse(location)
	if err != nil || u.Scheme != "temporal" || u.Host == "" {
		return bad("expected temporal://HOST:PORT/NAMESPACE")
	}
	if u.User != nil {
		return bad("credentials go in the TLS options (cert=, key=), not in the URL")
	}
	e := &Engine{location: location, hostPort: u.Host, namespace: strings.Trim(u.Path, "/"), queue: DefaultQueue}
	if _, _, err := net.SplitHostPort(e.hostPort); err != nil {
		e.hostPort = net.JoinHostPort(u.Host, "7233")
	}
	if e.namespace == "" {
		e.namespace = "default"
	}
	if strings.Contains(e.namespace, "/") {
		return bad("the namespace %q holds a /", e.namespace)
	}
	q := u.Query()
	for k := range q {
		switch k {
		case "tls", "ca", "cert", "key", "server-name", "queue":
		default:
			return bad("unknown option %q (expected tls, ca, cert, key, server-name, queue)", k)
		}
	}
	if v := q.Get("queue"); v != "" {
		e.queue = v
	}
	if q.Get("tls") == "true" || q.Has("ca") || q.Has("cert") {
		e.tls = &tls.Config{ServerName: q.Get("server-name"), MinVersion: tls.VersionTLS12}
		if ca := q.Get("ca"); ca != "" {
			pem, err := os.ReadFile(ca)
			if err != nil {
				return bad("ca: %v", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return bad("ca: %s holds no PEM certificate", ca)
			}
			e.tls.RootCAs = pool
		}
		if cert, key := q.Get("cert"), q.Get("key"); cert != "" || key != "" {
			if cert == "" || key == "" {
				return bad("cert and key go together")
			}
			pair, err := tls.LoadX509KeyPair(cert, key)
			if err != nil {
				return bad("cert, key: %v", err)
			}
			e.tls.Certificates = []tls.Certificate{pair}
		}
	} else if q.Has("server-name") || q.Has("key") {
		return bad("server-name and key need tls=true")
	}
	return e, nil
}

// dataConverter compresses what goes to the server: a plan's skeleton is
// large and repetitive.
var dataConverter = converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), converter.NewZlibCodec(converter.ZlibCodecOptions{}))

// dial connects to the server.
func (e *Engine) dial(ctx context.Context, identity string) (client.Client, error) {
	c, err := client.DialContext(ctx, client.Options{
		HostPort:          e.hostPort,
		Namespace:         e.namespace,
		Identity:          identity,
		DataConverter:     dataConverter,
		Logger:            sdklog.NewStructuredLogger(slog.Default()),
		ConnectionOptions: client.ConnectionOptions{TLS: e.tls},
	})
	if err != nil {
		return nil, fmt.Errorf("connect to the Temporal server %s (namespace %s): %w", e.hostPort, e.namespace, err)
	}
	return c, nil
}

// identity names this process to the server: host and pid.
func identity() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d", host, os.Getpid())
}

// WorkflowID is the workflow of a stack's runs: one per state identity, so
// that a second cannot start while one runs.
func WorkflowID(stateLocation, stack string) string {
	return "gantry:" + action.StateIdentity(stateLocation, stack)
}
