package temporal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpen reads engine locations: host and port (7233 by default), the
// namespace ("default"), the queue, TLS; and refuses what is not one,
// saying what.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in                  string
		hostPort, ns, queue string
		tls                 bool
		err                 string
	}{
		{in: "temporal://t.internal:7000/prod", hostPort: "t.internal:7000", ns: "prod", queue: DefaultQueue},
		{in: "temporal://t.internal", hostPort: "t.internal:7233", ns: "default", queue: DefaultQueue},
		{in: "temporal://127.0.0.1:7233/default?queue=ci", hostPort: "127.0.0.1:7233", ns: "default", queue: "ci"},
		{in: "temporal://t:1/ns?tls=true&server-name=t.example", hostPort: "t:1", ns: "ns", queue: DefaultQueue, tls: true},
		{in: "http://t:1/ns", err: "expected temporal://HOST:PORT/NAMESPACE"},
		{in: "temporal:///ns", err: "expected temporal://HOST:PORT/NAMESPACE"},
		{in: "temporal://u:p@t:1/ns", err: "credentials go in the TLS options"},
		{in: "temporal://t:1/a/b", err: `the namespace "a/b" holds a /`},
		{in: "temporal://t:1/ns?colour=red", err: `unknown option "colour"`},
		{in: "temporal://t:1/ns?tls=true&ca=" + ca, err: "holds no PEM certificate"},
		{in: "temporal://t:1/ns?tls=true&ca=" + filepath.Join(dir, "none.pem"), err: "ca: open"},
		{in: "temporal://t:1/ns?tls=true&cert=x.pem", err: "cert and key go together"},
		{in: "temporal://t:1/ns?key=k.pem", err: "need tls=true"},
	}
	for _, tt := range tests {
		e, err := Open(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Open(%q) = %v, want an error with %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Open(%q): %v", tt.in, err)
			continue
		}
		if e.hostPort != tt.hostPort || e.namespace != tt.ns || e.queue != tt.queue || (e.tls != nil) != tt.tls {
			t.Errorf("Open(%q) = %s %s %s tls %v", tt.in, e.hostPort, e.namespace, e.queue, e.tls != nil)
		}
	}
}

// FuzzOpen: no location makes Open panic.
func FuzzOpen(f *testing.F) {
	for _, s := range []string{"temporal://t:1/ns?tls=true", "temporal://[::1]:7233/x?queue=q", "temporal://%zz", "temporal://t/ns?cert=&key="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = Open(s)
	})
}
