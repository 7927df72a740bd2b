package component

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/procstat"
	"github.com/gantry-dev/gantry/internal/testenv"
)

func TestCapture(t *testing.T) {
	c := NewCapture()
	for _, l := range strings.Split(`noise = ignored
Outputs:

host = "db.local"
port = 5432
  spaced   =   value with spaces
colour = `+"\x1b[32mgreen\x1b[0m"+`
provides = kubernetes, vault
single = 'quoted'

after = ignored
Provides:
- ingress
dns tls

`+"\x1b[1mOutputs:\x1b[0m"+`
host = overridden
`, "\n") {
		c.Line(l)
	}
	want := map[string]string{"host": "overridden", "port": "5432", "spaced": "value with spaces", "colour": "green", "single": "quoted"}
	if diff := cmp.Diff(want, c.Outputs()); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"kubernetes", "vault", "ingress", "dns", "tls"}, c.Provides()); diff != "" {
		t.Errorf("provides (-want +got):\n%s", diff)
	}
}

func TestProbe(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // name -> content; names ending in * are executable
		verb  string
		kind  string
		file  string
		err   string
	}{
		{"makefile target", map[string]string{"Makefile": "X := 1\ndeploy undeploy:\n\techo hi\n"}, "deploy", ImplMake, "Makefile", ""},
		{"makefile without the target falls through", map[string]string{"Makefile": "build:\n", "deploy*": "#!/bin/sh\n"}, "deploy", ImplScript, "deploy", ""},
		{"assignment is not a target", map[string]string{"Makefile": "deploy := 1\n"}, "deploy", "", "", "no implementation"},
		{"script", map[string]string{"deploy.sh*": "#!/bin/sh\n"}, "deploy", ImplScript, "deploy.sh", ""},
		{"bin script", map[string]string{"bin/undeploy*": "#!/bin/sh\n"}, "undeploy", ImplScript, "bin/undeploy", ""},
		{"underscore script", map[string]string{"_backup.sh*": "#!/bin/sh\n"}, "backup", ImplScript, "_backup.sh", ""},
		{"not executable", map[string]string{"deploy.sh": "#!/bin/sh\n"}, "deploy", "", "", "deploy.sh exists but is not executable"},
		{"terraform", map[string]string{"main.tf": ""}, "deploy", ImplTerraform, "main.tf", ""},
		{"helm", map[string]string{"Chart.yaml": ""}, "deploy", ImplHelm, "Chart.yaml", ""},
		{"kustomize", map[string]string{"kustomization.yaml": ""}, "deploy", ImplKubernetes, "kustomization.yaml", ""},
		{"nothing", map[string]string{"README": ""}, "deploy", "", "", `no implementation of "deploy"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				mode := os.FileMode(0o644)
				if strings.HasSuffix(name, "*") {
					name, mode = strings.TrimSuffix(name, "*"), 0o755
				}
				p := filepath.Join(dir, name)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(content), mode); err != nil {
					t.Fatal(err)
				}
			}
			impl, err := Probe(dir, tt.verb)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("want error %q, got %v, %v", tt.err, impl, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if impl.Kind != tt.kind || impl.File != filepath.Join(dir, tt.file) {
				t.Errorf("got %s %s, want %s %s", impl.Kind, impl.File, tt.kind, tt.file)
			}
		})
	}
}

// TestProbeGoneFolder: a component's folder that is gone (removed with the
// component from the stack) is said so, not only what it lacks.
func TestProbeGoneFolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gone")
	_, err := Probe(path, "undeploy")
	if err == nil || !strings.HasPrefix(err.Error(), `no implementation of "undeploy" in `+path+": expected a Makefile with the target undeploy:") || !strings.HasSuffix(err.Error(), "; the folder does not exist") {
		t.Errorf("Probe(%s): %v, want it to say the folder does not exist", path, err)
	}
}

func TestRunKillsTheProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	var out testenv.SyncBuffer
	done := make(chan error)
	go func() {
		done <- Run(ctx, Process{
			Args:   []string{"/bin/sh", "-c", "trap '' TERM; sleep 300 & echo $! > " + pidFile + "; echo started; wait"},
			Stdout: &out, Grace: 200 * time.Millisecond,
		})
	}()
	waitUntil(t, "the process has started", func() bool { return strings.Contains(out.String(), "started") })
	cancel()
	err := <-done
	if err == nil {
		t.Fatal("a cancelled process reported success")
	}
	b, _ := os.ReadFile(pidFile)
	var pid int
	for _, c := range strings.TrimSpace(string(b)) {
		pid = pid*10 + int(c-'0')
	}
	if pid <= 0 {
		t.Fatal("the child never wrote its pid")
	}
	// SIGKILL was sent to the group; the child dies when the kernel gets to
	// it. A zombie is dead already: only a running child is a survivor.
	waitUntil(t, fmt.Sprintf("child %d is gone after the cancellation", pid), func() bool {
		st, ok := procstat.Read(pid)
		return !ok || st.State == 'Z' || st.State == 'X'
	})
}

// TestRunLeaderKilledStopsItsGroup: a leader killed from outside gantry
// (an operator's kill -9 of a hung make) leaves nothing of its group
// running: its child would go on, unseen, beside the retry. A leader that
// exits 0 keeps what it started (a daemon it means to leave).
func TestRunLeaderKilledStopsItsGroup(t *testing.T) {
	tests := []struct {
		name     string
		kill     bool
		survives bool
	}{
		{"leader killed", true, false},
		{"leader exits 0", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			childPid, leaderPid := filepath.Join(dir, "child.pid"), filepath.Join(dir, "leader.pid")
			script := "sleep 300 & echo $! > " + childPid + "; echo $$ > " + leaderPid + "; echo started"
			if tt.kill {
				script += "; wait"
			}
			var out testenv.SyncBuffer
			done := make(chan error)
			go func() {
				// The child's output goes elsewhere: a daemon does not
				// hold the step's pipes (which Run waits 5 s for).
				done <- Run(context.Background(), Process{Args: []string{"/bin/sh", "-c", strings.Replace(script, "sleep 300 &", "sleep 300 >/dev/null 2>&1 &", 1)}, Stdout: &out, Grace: time.Hour})
			}()
			waitUntil(t, "the process has started", func() bool { return strings.Contains(out.String(), "started") })
			if tt.kill {
				if err := syscall.Kill(readPid(t, leaderPid), syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
			err := <-done
			if tt.kill != (err != nil) {
				t.Fatalf("Run: %v", err)
			}
			pid := readPid(t, childPid)
			defer syscall.Kill(pid, syscall.SIGKILL)
			alive := func() bool {
				st, ok := procstat.Read(pid)
				return ok && st.State != 'Z' && st.State != 'X'
			}
			if tt.survives {
				if !alive() {
					t.Fatal("the child of a leader that exited 0 was stopped")
				}
				return
			}
			// SIGTERM first: sleep ends on it, within the grace period.
			waitUntil(t, fmt.Sprintf("child %d is gone", pid), func() bool { return !alive() })
		})
	}
}

// readPid reads a pid a script wrote.
func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		t.Fatalf("pid file %s: %q", path, b)
	}
	return pid
}

// TestRunStoppedProcessFails: a process gantry stopped with SIGTERM (a
// timeout, an interrupt) fails even when it exits with status 0 on it: it
// did not finish what it was started for. One that ended on its own
// succeeds.
func TestRunStoppedProcessFails(t *testing.T) {
	tests := []struct {
		name   string
		script string
		cancel bool // cancel once "started" is printed
		want   string
	}{
		{"exits 0 on SIGTERM", "trap 'echo bye; exit 0' TERM; echo started; sleep 300 & wait", true,
			"/bin/sh -c … was stopped: it exited with status 0 on SIGTERM, which does not say it finished"},
		{"not stopped", "echo started", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out testenv.SyncBuffer
			done := make(chan error)
			go func() {
				done <- Run(ctx, Process{Args: []string{"/bin/sh", "-c", tt.script}, Name: "/bin/sh -c …", Stdout: &out, Grace: time.Hour})
			}()
			waitUntil(t, "the process has started", func() bool { return strings.Contains(out.String(), "started") })
			if tt.cancel {
				cancel()
			}
			err := <-done
			var se *StoppedError
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("got %v, want success", err)
			case tt.want != "" && (!errors.As(err, &se) || err.Error() != tt.want):
				t.Fatalf("got %v, want %q", err, tt.want)
			}
			if !tt.cancel {
				// Cancelling after the end changes nothing.
				cancel()
			}
		})
	}
}

// TestRunEndedAsGantryGotSIGTERM: a process that ended with status 0 before
// gantry signalled it, while gantry was being stopped, fails when what
// stopped gantry was SIGTERM heard of less than sigtermDoubt after its
// end — the same SIGTERM may have ended it (a control group killed whole)
// — and succeeds when gantry heard of it later, or when it was Ctrl-C or a
// closed terminal, which reach gantry's process group only, or when the
// run stopped for another reason.
// Deterministic: the leader prints its pid and exits; a descendant holds
// its output, so that Run is still waiting for it when the context is
// cancelled, with the leader reaped.
func TestRunEndedAsGantryGotSIGTERM(t *testing.T) {
	// cause is made at the cancel, from when the process was started:
	// times that bound its end whatever the machine's speed.
	tests := []struct {
		name   string
		cause  func(started time.Time) error
		failed bool
	}{
		{"SIGTERM, when unknown", func(time.Time) error { return Interrupt{Signal: syscall.SIGTERM} }, true},
		// Heard of before the process started: it ended after.
		{"SIGTERM as it ran", func(started time.Time) error { return Interrupt{Signal: syscall.SIGTERM, At: started} }, true},
		// As if gantry heard of it 10 s from now, long after the leader's
		// end: a process that had finished, its output held by a child.
		{"SIGTERM long after its end", func(time.Time) error {
			return Interrupt{Signal: syscall.SIGTERM, At: time.Now().Add(10 * time.Second)}
		}, false},
		{"Ctrl-C", func(started time.Time) error { return Interrupt{Signal: os.Interrupt, At: started} }, false},
		{"terminal closed", func(time.Time) error { return Interrupt{Signal: syscall.SIGHUP} }, false},
		{"stopped for another reason", func(time.Time) error { return errors.New("another run took the state's lock") }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			var out testenv.SyncBuffer
			done := make(chan error)
			started := time.Now()
			go func() {
				done <- Run(ctx, Process{Args: []string{"/bin/sh", "-c", "sleep 300 & echo pid $$"}, Name: "/bin/sh -c …", Stdout: &out, Grace: time.Hour})
			}()
			var pid int
			waitUntil(t, "the leader has printed its pid", func() bool {
				_, err := fmt.Sscanf(out.String(), "pid %d", &pid)
				return err == nil
			})
			waitUntil(t, "the leader has been reaped", func() bool { return syscall.Kill(pid, 0) == syscall.ESRCH })
			cancel(tt.cause(started))
			err := <-done
			var se *StoppedError
			switch {
			case tt.failed && (!errors.As(err, &se) || !se.WithGantry):
				t.Fatalf("got %v, want a StoppedError WithGantry", err)
			case tt.failed && !strings.Contains(err.Error(), "ended with status 0 as gantry got SIGTERM"):
				t.Errorf("message %q", err)
			case !tt.failed && err != nil:
				t.Fatalf("got %v, want success", err)
			}
		})
	}
}

// TestRunStopNow: a second interrupt (the stop-now context done) kills a
// group that ignores SIGTERM at once, without waiting for its grace period:
// after the first interrupt cancelled the context, and also under a context
// that is never cancelled (an installation handler's finalize runs under
// context.WithoutCancel).
func TestRunStopNow(t *testing.T) {
	tests := []struct {
		name     string
		detached bool // the process runs under context.WithoutCancel
	}{
		{"after the first interrupt", false},
		{"under a context never cancelled", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			now, stopNow := context.WithCancel(context.Background())
			defer stopNow()
			ctx = WithStopNow(ctx, now)
			runCtx := ctx
			if tt.detached {
				runCtx = context.WithoutCancel(ctx)
			}
			var out testenv.SyncBuffer
			done := make(chan error)
			go func() {
				done <- Run(runCtx, Process{
					Args:   []string{"/bin/sh", "-c", "trap '' TERM; echo started; while :; do sleep 1; done"},
					Stdout: &out, Grace: time.Hour,
				})
			}()
			waitUntil(t, "the process has started", func() bool { return strings.Contains(out.String(), "started") })
			cancel()
			stopNow()
			err := <-done
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Signal != "SIGKILL (killed)" || !strings.Contains(err.Error(), "was killed by SIGKILL (killed)") {
				t.Fatalf("got %v, want the process killed by SIGKILL", err)
			}
		})
	}
}

// TestRunStdin: a process given no input reads an empty one (it does not
// wait for a terminal), also when many run at once.
func TestRunStdin(t *testing.T) {
	var wg sync.WaitGroup
	outs := make([]testenv.SyncBuffer, 8)
	errs := make([]error, len(outs))
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = Run(context.Background(), Process{Args: []string{"/bin/sh", "-c", "cat; echo read"}, Stdout: &outs[i]})
		}()
	}
	wg.Wait()
	for i := range outs {
		if errs[i] != nil || outs[i].String() != "read\n" {
			t.Errorf("process %d: %v, output %q", i, errs[i], outs[i].String())
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = w.WriteString("given\n"); w.Close() }()
	var out testenv.SyncBuffer
	if err := Run(context.Background(), Process{Args: []string{"/bin/sh", "-c", "cat"}, Stdin: r, Stdout: &out}); err != nil || out.String() != "given\n" {
		t.Errorf("with an input: %v, output %q", err, out.String())
	}
	r.Close()
	out = testenv.SyncBuffer{}
	if err := Run(context.Background(), Process{Args: []string{"/bin/sh", "-c", "cat"}, Stdin: strings.NewReader("read through a pipe\n"), Stdout: &out}); err != nil || out.String() != "read through a pipe\n" {
		t.Errorf("with an input that is not a file: %v, output %q", err, out.String())
	}
}

func TestRunExitCode(t *testing.T) {
	err := Run(context.Background(), Process{Args: []string{"/bin/sh", "-c", "exit 3"}})
	ee, ok := err.(*ExitError)
	if !ok || ee.Code != 3 {
		t.Fatalf("got %v", err)
	}
	if _, err := exec.LookPath("true"); err == nil {
		if err := Run(context.Background(), Process{Args: []string{"true"}}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestEnviron(t *testing.T) {
	got := Environ([]string{"A=1", "TF_VAR_x=secret", "B=2"}, false, []string{"B=3", "C=4"}, []string{"A=5"})
	if diff := cmp.Diff([]string{"A=5", "B=3", "C=4"}, got); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if got := Environ([]string{"TF_VAR_x=1"}, true); len(got) != 1 {
		t.Errorf("TF_VAR_ dropped with --os-environment everything")
	}
}

func TestResolveOutputs(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "cert.pem"), []byte("PEM"), 0o600)
	c := &manifest.Component{Outputs: []manifest.Output{
		{Name: "host"},
		{Name: "url", Value: "http://${host}:${db.port}"},
		{Name: "vpc", FromTfVar: "vpc_id"},
		{Name: "cfg", FromTfVar: "cfg_b64/base64"},
		{Name: "cert", FromTfVar: "cert_file"},
		{Name: "db.port"},
		{Name: "token", Kind: "secret"},
	}}
	raw := map[string]string{"host": "h", "vpc_id": "vpc-1", "cfg_b64": "eyJhIjoxfQ==", "cert_file": "file://" + filepath.Join(dir, "cert.pem"), "token": "t0k3n", "extra": "x"}
	out, secret, err := ResolveOutputs(c, dir, raw, nil, expanded(t, "db.port", "5432"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"host": "h", "url": "http://h:5432", "vpc": "vpc-1", "cfg": `{"a":1}`, "cert": "PEM", "db.port": "5432", "token": "t0k3n",
		"vpc_id": "vpc-1", "cfg_b64": "eyJhIjoxfQ==", "cert_file": raw["cert_file"], "extra": "x"}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	// cert is secret by its name (the Hub rule), and so is the raw output it reads.
	if diff := cmp.Diff([]string{"cert", "cert_file", "token"}, secret); diff != "" {
		t.Errorf("secret (-want +got):\n%s", diff)
	}
	_, _, err = ResolveOutputs(&manifest.Component{Outputs: []manifest.Output{{Name: "missing"}}}, dir, nil, nil, expanded(t))
	if err == nil || !strings.Contains(err.Error(), "declared but not produced") {
		t.Errorf("missing output: %v", err)
	}
	_, _, err = ResolveOutputs(&manifest.Component{}, dir, map[string]string{"bad": "A\xffB", "k\xfe": "v", "good": "x"}, nil, expanded(t))
	if err == nil || err.Error() != `outputs "bad", "k\xfe": not UTF-8 text; gantry keeps outputs as text (the state, the components after this one): print a binary value base64-encoded` {
		t.Errorf("outputs that are no text: %v", err)
	}
	// What fromTfVar decodes or reads must be text, as every output: the
	// state holds text only. The value is not said.
	os.WriteFile(filepath.Join(dir, "ks.bin"), []byte{0xff, 0x00, 0xfe}, 0o600)
	for name, v := range map[string]string{"ks_b64/base64": "/wA=", "ks_file": "file://" + filepath.Join(dir, "ks.bin")} {
		key, _, _ := strings.Cut(name, "/")
		_, _, err = ResolveOutputs(&manifest.Component{Outputs: []manifest.Output{{Name: "ks", FromTfVar: name}}}, dir, map[string]string{key: v}, nil, expanded(t))
		if err == nil || !strings.Contains(err.Error(), "output ks: fromTfVar "+name+": what it gives is not UTF-8 text") || strings.Contains(err.Error(), "/wA=") {
			t.Errorf("fromTfVar %s of bytes that are no text: %v", name, err)
		}
	}

	// fromObject takes what the plugin read, reported under the output's
	// name; a Secret's value is secret whatever the output's name says.
	objs := &manifest.Component{Outputs: []manifest.Output{
		{Name: "addr", FromObject: &manifest.ObjectRef{Kind: "Service", Name: "web", Path: ".spec.clusterIP"}},
		{Name: "dbpass", FromObject: &manifest.ObjectRef{Kind: "secrets", Name: "db", Path: ".data.p"}},
		{Name: "dsn", Value: "postgres://u:#{base64.encode(bytes(dbpass))}@h"},
		{Name: "dsn2", Value: "again ${dsn}"},
		{Name: "tf", Value: "${tf_key}"},
	}}
	out, secret, err = ResolveOutputs(objs, dir, map[string]string{"addr": "10.0.0.7", "dbpass": "pw", "tf_key": "k"}, []string{"tf_key"}, expanded(t, "addr", "param"))
	if err != nil || out["addr"] != "10.0.0.7" || out["dbpass"] != "pw" {
		t.Errorf("fromObject outputs: %v, %v", out, err)
	}
	// Outputs computed from a secret one are secret, however computed;
	// so are those reading a raw output the implementation said is secret.
	if diff := cmp.Diff([]string{"dbpass", "dsn", "dsn2", "tf", "tf_key"}, secret); diff != "" {
		t.Errorf("secret (-want +got):\n%s", diff)
	}
	// Not read: never the parameter of the same name instead.
	_, _, err = ResolveOutputs(objs, dir, map[string]string{"dbpass": "pw", "tf_key": "k"}, nil, expanded(t, "addr", "param"))
	if err == nil || !strings.Contains(err.Error(), "output addr: fromObject: Service/web was not read from the cluster") {
		t.Errorf("unread fromObject output: %v", err)
	}
}

// TestResolveOutputsFileRef: a file:// raw output is read as the Hub CLI
// reads it: a relative path from the component's folder, whatever gantry's
// working folder is, and a value of one line without its line end.
func TestResolveOutputsFileRef(t *testing.T) {
	dir := t.TempDir()
	// A decoy in the working folder: the value must not come from it.
	wd := t.TempDir()
	t.Chdir(wd)
	os.WriteFile(filepath.Join(wd, "token.txt"), []byte("WRONG-FILE\n"), 0o600)
	files := map[string]string{
		"token.txt":    "abc123\n",
		"sub/crlf.txt": "  abc123 \r\n",
		"pem.txt":      "-----BEGIN-----\nAAAA\n-----END-----\n",
		"two.txt":      "a\nb",
		"empty.txt":    "",
	}
	for name, content := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700)
		os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600)
	}
	for _, tc := range []struct{ raw, want string }{
		{"file://token.txt", "abc123"},
		{"file://./sub/crlf.txt", "abc123"},
		{"file://" + filepath.Join(dir, "token.txt"), "abc123"},
		{"file://pem.txt", files["pem.txt"]},
		{"file://two.txt", "a\nb"},
		{"file://empty.txt", ""},
		{"file://", "file://"}, // no path: the value as printed, as in the Hub
	} {
		c := &manifest.Component{Outputs: []manifest.Output{{Name: "tok", FromTfVar: "rel"}}}
		out, _, err := ResolveOutputs(c, dir, map[string]string{"rel": tc.raw}, nil, expanded(t))
		if err != nil || out["tok"] != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.raw, out["tok"], err, tc.want)
		}
	}
	c := &manifest.Component{Outputs: []manifest.Output{{Name: "tok", FromTfVar: "rel"}}}
	_, _, err := ResolveOutputs(c, dir, map[string]string{"rel": "file://nosuch.txt"}, nil, expanded(t))
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "nosuch.txt")) {
		t.Errorf("missing file: %v", err)
	}
}

// TestResolveOutputsSecretFromParameters: an output whose value reads a
// secret parameter is secret however it transforms the value, and whatever
// its secret: says; one that reads only plain values is not.
func TestResolveOutputsSecretFromParameters(t *testing.T) {
	no := false
	c := &manifest.Component{Outputs: []manifest.Output{
		{Name: "lower", Value: "#{db.password.lowerAscii()}"},
		{Name: "encoded", Value: "${db.password/base64}"},
		{Name: "declaredPlain", Value: "x-${db.password}", Secret: &no},
		{Name: "url", Value: "http://${db.host}"},
	}}
	out, secret, err := ResolveOutputs(c, "", nil, nil, expanded(t, "db.password", "PwForOuts2Zz", "db.host", "db.local"))
	if err != nil {
		t.Fatal(err)
	}
	if out["lower"] != "pwforouts2zz" || out["url"] != "http://db.local" {
		t.Errorf("outputs: %v", out)
	}
	if diff := cmp.Diff([]string{"declaredPlain", "encoded", "lower"}, secret); diff != "" {
		t.Errorf("secret (-want +got):\n%s", diff)
	}
}
