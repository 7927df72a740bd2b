// Command sweep feeds gantry bad input of many kinds and checks that each is
// refused as the rules say: exit code 2, an error that names the place
// (file:line:col, or the path when the whole file is at fault), no crash, no
// hang, no runaway memory, and nothing written. It prints one line per case
// and the counts:
//
//	bad inputs tried N, positioned error M, crashes 0, writes on invalid input 0
//
// Run it with scripts/sweep.sh (it builds gantry first), or
// go run ./scripts/sweep -gantry PATH.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"
)

// want says how a case must be refused.
type want int

const (
	// positioned: the error names file:line:col.
	positioned want = iota
	// named: the whole input is at fault (a FIFO, /dev/zero, a missing
	// file, a bad flag): the error names the path or the flag.
	named
)

// bad is one kind of bad input: files over the base stack (an empty value
// deletes the file), a setup run in the case's folder, the command and how
// it must be refused.
type bad struct {
	name  string
	files map[string]string
	setup string // shell, run before the command
	args  []string
	want  want
	// mention is a text the error must hold (the field or path).
	mention string
}

var base = map[string]string{
	"hub.yaml": `version: 1
kind: stack
meta: {name: sweep}
components:
  - name: app
    source: {dir: app}
parameters:
  - name: greeting
    value: hello
`,
	"app/hub-component.yaml": `version: 1
kind: component
meta: {name: app}
parameters:
  - name: greeting
    env: GREETING
templates:
  files: ["*.template"]
`,
	"app/app.conf.template": "${greeting}\n",
	"app/Makefile":          "deploy:\n\t@touch ../deployed\nundeploy:\n\t@true\n",
}

// stack is the base stack manifest with text added at its end.
func stack(extra string) map[string]string {
	return map[string]string{"hub.yaml": base["hub.yaml"] + extra}
}

// comp is the base component manifest with text added at its end.
func comp(extra string) map[string]string {
	return map[string]string{"app/hub-component.yaml": base["app/hub-component.yaml"] + extra}
}

// replaceIn is a base file with a text replaced.
func replaceIn(file, old, new string) map[string]string {
	return map[string]string{file: strings.Replace(base[file], old, new, 1)}
}

// doubling is a chain of n parameters, each twice the one before.
func doubling(n int, expr func(prev string) string) string {
	var b strings.Builder
	b.WriteString("  - name: e0\n    value: abcdefgh\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  - name: e%d\n    value: %q\n", i, expr(fmt.Sprintf("e%d", i-1)))
	}
	return b.String()
}

func cases() []bad {
	long := strings.Repeat("x", 5000)
	laughs := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 'b'; i <= 'j'; i++ {
		prev := string(i - 1)
		laughs += fmt.Sprintf("%c: &%c [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", i, i, prev, prev, prev, prev, prev, prev, prev, prev, prev, prev)
	}
	v := []string{"validate", "hub.yaml"}
	return []bad{
		// The file itself.
		{name: "empty stack file", files: map[string]string{"hub.yaml": "\n"}, args: v, want: named, mention: "hub.yaml"},
		{name: "only a document marker", files: map[string]string{"hub.yaml": "---\n"}, args: v, want: named, mention: "hub.yaml"},
		{name: "null document", files: map[string]string{"hub.yaml": "~\n"}, args: v, want: named, mention: "hub.yaml"},
		{name: "unclosed flow sequence", files: stack("requires: [a, b\n"), args: v},
		{name: "tab indentation", files: map[string]string{"hub.yaml": "version: 1\nkind: stack\nmeta:\n\tname: x\n"}, args: v},
		{name: "mapping key not a scalar", files: stack("? [a, b]\n: c\n"), args: v},
		{name: "duplicate key", files: stack("kind: stack\n"), args: v},
		{name: "alias bomb", files: stack("meta2:\n" + indent(laughs)), args: v},
		{name: "deep nesting", files: stack("x: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n"), args: v},
		{name: "invalid UTF-8", files: stack("# \xff\xfe\n"), args: v},
		{name: "NUL in a value", files: replaceIn("hub.yaml", "value: hello", "value: \"hel\\0lo\""), args: v, mention: "NUL"},
		{name: "manifest is /dev/zero", args: []string{"validate", "/dev/zero"}, want: named, mention: "/dev/zero"},
		{name: "manifest is /dev/urandom", args: []string{"deploy", "/dev/urandom"}, want: named, mention: "/dev/urandom"},
		{name: "manifest is a FIFO", setup: "rm hub.yaml && mkfifo hub.yaml", args: v, want: named, mention: "hub.yaml"},
		{name: "manifest is a directory", setup: "rm hub.yaml && mkdir hub.yaml", args: v, want: named, mention: "hub.yaml"},
		{name: "manifest missing", args: []string{"validate", "nothere.yaml"}, want: named, mention: "nothere.yaml"},
		{name: "manifest of 100 MiB", setup: "head -c 104857600 /dev/zero | tr '\\0' '#' > big.yaml", args: []string{"validate", "big.yaml"}, want: named, mention: "big.yaml"},
		// The stack's fields.
		{name: "unknown field", files: stack("compnents: []\n"), args: v, mention: "compnents"},
		{name: "wrong version", files: replaceIn("hub.yaml", "version: 1", "version: 2"), args: v, mention: "version"},
		{name: "wrong kind", files: replaceIn("hub.yaml", "kind: stack", "kind: stak"), args: v, mention: "kind"},
		{name: "no meta name", files: replaceIn("hub.yaml", "meta: {name: sweep}", "meta: {}"), args: v, mention: "name"},
		{name: "empty component name", files: replaceIn("hub.yaml", "- name: app", `- name: ""`), args: v, mention: "name"},
		{name: "null component name", files: replaceIn("hub.yaml", "- name: app", "- name: ~"), args: v, mention: "name"},
		{name: "component name of 5000 characters", files: replaceIn("hub.yaml", "- name: app", "- name: "+long), args: v, mention: "name"},
		{name: "component name with a slash", files: replaceIn("hub.yaml", "- name: app", "- name: a/b"), args: v, mention: "name"},
		{name: "duplicate component", files: replaceIn("hub.yaml", "parameters:", "  - name: app\n    source: {dir: app}\nparameters:"), args: v, mention: "app"},
		{name: "unknown dependency", files: replaceIn("hub.yaml", "source: {dir: app}", "source: {dir: app}\n    depends: [nope]"), args: v, mention: "nope"},
		{name: "self dependency", files: replaceIn("hub.yaml", "source: {dir: app}", "source: {dir: app}\n    depends: [app]"), args: v, mention: "app"},
		{name: "dependency cycle", files: replaceIn("hub.yaml", "source: {dir: app}", "source: {dir: app}\n    depends: [b]\n  - name: b\n    source: {dir: app}\n    depends: [app]"), args: v, mention: "cycle"},
		{name: "missing component folder", files: replaceIn("hub.yaml", "dir: app", "dir: nowhere"), args: v, mention: "nowhere"},
		{name: "component folder is a file", files: replaceIn("hub.yaml", "dir: app", "dir: app/Makefile"), args: v, mention: "Makefile"},
		{name: "order names an unknown component", files: stack("lifecycle:\n  order: [app, ghost]\n"), args: v, mention: "ghost"},
		{name: "mandatory and optional at once", files: stack("lifecycle:\n  mandatory: [app]\n  optional: [app]\n"), args: v, mention: "app"},
		{name: "stack parallel 0", files: stack("lifecycle:\n  parallel: 0\n"), args: v, mention: "parallel"},
		{name: "stack verbs with a space", files: stack("lifecycle:\n  verbs: ['bad verb']\n"), args: v, mention: "verbs"},
		{name: "teardown_orphans unknown", files: stack("lifecycle:\n  teardown_orphans: sometimes\n"), args: v, mention: "teardown_orphans"},
		{name: "fromStack is /dev/zero", files: replaceIn("hub.yaml", "meta: {name: sweep}", "meta: {name: sweep, fromStack: /dev/zero}"), args: v, mention: "/dev/zero"},
		{name: "fromStack is a FIFO", setup: "mkfifo base.yaml", files: replaceIn("hub.yaml", "meta: {name: sweep}", "meta: {name: sweep, fromStack: base.yaml}"), args: v, mention: "base.yaml"},
		{name: "fromStack is a link loop", setup: "ln -s loop1 loop2 && ln -s loop2 loop1", files: replaceIn("hub.yaml", "meta: {name: sweep}", "meta: {name: sweep, fromStack: loop1}"), args: v, mention: "loop1"},
		{name: "fromStack missing", files: replaceIn("hub.yaml", "meta: {name: sweep}", "meta: {name: sweep, fromStack: ../nowhere}"), args: v, mention: "nowhere"},
		// Parameters.
		{name: "parameter without a name", files: stack("  - value: x\n"), args: v, mention: "name"},
		{name: "parameter with an empty name", files: stack("  - name: \"\"\n    value: x\n"), args: v, mention: "name"},
		{name: "parameter name with a NUL", files: stack("  - name: \"a\\0b\"\n    value: x\n"), args: v, mention: "NUL"},
		{name: "parameter of the wrong shape", files: stack("  - name: p\n    value: {a: [1, {b: 2}]}\n    kind: 42\n"), args: v},
		{name: "unknown reference", files: stack("  - name: p\n    value: ${nope}\n"), args: v, mention: "nope"},
		{name: "parameter cycle", files: stack("  - name: p\n    value: ${q}\n  - name: q\n    value: ${p}\n"), args: v, mention: "cycle"},
		{name: "unknown filter", files: stack("  - name: p\n    value: ${greeting/rot13}\n"), args: v, mention: "rot13"},
		{name: "unbase64 of text that is not base64", files: stack("  - name: p\n    value: ${greeting/unbase64}\n"), args: v, mention: "greeting"},
		{name: "CEL syntax error", files: stack("  - name: p\n    value: \"#{1 +}\"\n"), args: v, mention: "p"},
		{name: "expansion bomb", files: stack(doubling(40, func(p string) string { return "${" + p + "}${" + p + "}" })), args: v, mention: "e"},
		{name: "CEL concatenation bomb", files: stack(doubling(40, func(p string) string { return "#{" + p + " + " + p + "}" })), args: v, mention: "e"},
		{name: "CEL nested replace bomb", files: stack("  - name: p\n    value: \"#{'aaaaaaaaaa'.replace('a', 'aaaaaaaaaa').replace('a', 'aaaaaaaaaa').replace('a', 'aaaaaaaaaa').replace('a', 'aaaaaaaaaa').replace('a', 'aaaaaaaaaa').replace('a', 'aaaaaaaaaa').replace('a', 'aaaaaaaaaa').replace('a', 'aaaaaaaaaa')}\"\n"), args: v, mention: "p"},
		{name: "env that sets another variable", files: replaceIn("app/hub-component.yaml", "env: GREETING", "env: \"PATH=/x\""), args: v, mention: "env"},
		{name: "env with a NUL", files: replaceIn("app/hub-component.yaml", "env: GREETING", "env: \"A\\0B\""), args: v, mention: "NUL"},
		{name: "fromFile is /dev/zero", files: stack("  - name: p\n    fromFile: /dev/zero\n"), args: v, mention: "/dev/zero"},
		{name: "fromFile missing", files: stack("  - name: p\n    fromFile: nothere.txt\n"), args: v, mention: "nothere.txt"},
		{name: "params file malformed", files: map[string]string{"params.yaml": "- name: [\n"}, args: []string{"validate", "hub.yaml", "params.yaml"}, mention: "params.yaml"},
		{name: "params file is /dev/zero", args: []string{"validate", "hub.yaml", "/dev/zero"}, want: named, mention: "/dev/zero"},
		{name: "params file is a FIFO", setup: "mkfifo params.yaml", args: []string{"validate", "hub.yaml", "params.yaml"}, want: named, mention: "params.yaml"},
		// The component's manifest.
		{name: "component manifest missing", setup: "rm app/hub-component.yaml", args: v, want: named, mention: "hub-component.yaml"},
		{name: "component manifest empty", files: map[string]string{"app/hub-component.yaml": "\n"}, args: v, want: named, mention: "hub-component.yaml"},
		{name: "component manifest is a directory", setup: "rm app/hub-component.yaml && mkdir app/hub-component.yaml", args: v, want: named, mention: "hub-component.yaml"},
		{name: "component manifest of the wrong kind", files: replaceIn("app/hub-component.yaml", "kind: component", "kind: stack"), args: v, mention: "kind"},
		{name: "component unknown field", files: comp("outptus: []\n"), args: v, mention: "outptus"},
		{name: "output kind typo", files: comp("outputs:\n  - name: o\n    value: x\n    kind: secrets\n"), args: v, mention: "kind"},
		{name: "output kind a number", files: comp("outputs:\n  - name: o\n    value: x\n    kind: 42\n"), args: v, mention: "kind"},
		{name: "fromTfVar unknown encoding", files: comp("outputs:\n  - name: o\n    fromTfVar: x/rot13\n"), args: v, mention: "rot13"},
		{name: "template glob malformed", files: replaceIn("app/hub-component.yaml", `files: ["*.template"]`, `files: ["[*.template"]`), args: v, mention: "templates.files"},
		{name: "template outside the component", files: replaceIn("app/hub-component.yaml", `files: ["*.template"]`, `files: ["../*.template"]`), args: v, mention: "templates.files"},
		{name: "template path absolute", files: replaceIn("app/hub-component.yaml", `files: ["*.template"]`, `files: ["/etc/*.template"]`), args: v, mention: "templates.files"},
		{name: "template kind unknown", files: replaceIn("app/hub-component.yaml", "templates:", "templates:\n  kind: jinja"), args: v, mention: "kind"},
		{name: "component verbs with a space", files: comp("lifecycle:\n  verbs: ['bad verb']\n"), args: v, mention: "verbs"},
		{name: "unknown step type", files: comp("lifecycle:\n  pre_component:\n    steps:\n      - run: x\n"), args: v, mention: "steps"},
		{name: "negative delay", files: comp("lifecycle:\n  pre_component:\n    steps:\n      - delay: -5\n"), args: v, mention: "delay"},
		{name: "probe with a bad URL", files: comp("lifecycle:\n  pre_component:\n    steps:\n      - probe: \"http://[::1\"\n"), args: v, mention: "probe"},
		{name: "unknown plugin", files: comp("plugins:\n  - nosuchplugin: [x]\n"), args: v, mention: "nosuchplugin"},
		{name: "plugin key of 5000 characters", files: comp("plugins:\n  - echo: {key: " + long + ", args: [x]}\n"), args: v, mention: "key"},
		{name: "unknown injection point", files: comp("lifecycle:\n  pre_everything:\n    steps: []\n"), args: v, mention: "pre_everything"},
		// Flags.
		{name: "--parallel 0", args: []string{"deploy", "hub.yaml", "--parallel", "0"}, want: named, mention: "--parallel"},
		{name: "--parallel -1", args: []string{"deploy", "hub.yaml", "--parallel", "-1"}, want: named, mention: "--parallel"},
		{name: "-c with an empty name", args: []string{"deploy", "hub.yaml", "-c", ""}, want: named, mention: "-c"},
		{name: "-c with an unknown component", args: []string{"deploy", "hub.yaml", "-c", "ghost"}, want: named, mention: "ghost"},
		{name: "unknown flag", args: []string{"deploy", "hub.yaml", "--paralel", "2"}, want: named, mention: "paralel"},
		{name: "-e without a value", args: []string{"deploy", "hub.yaml", "-e", "NAME"}, want: named, mention: "NAME"},
		// The state.
		{name: "state is garbage", files: map[string]string{"hub.yaml.state": "{not json"}, args: []string{"deploy", "hub.yaml"}, want: named, mention: "hub.yaml.state"},
		{name: "state is /dev/zero", args: []string{"deploy", "hub.yaml", "-s", "/dev/zero"}, want: named, mention: "/dev/zero"},
		{name: "state is a FIFO", setup: "mkfifo st.state", args: []string{"deploy", "hub.yaml", "-s", "st.state"}, want: named, mention: "st.state"},
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

// snapshot lists a folder's files with their sizes and times: anything
// gantry writes shows.
func snapshot(dir string) string {
	var lines []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		lines = append(lines, fmt.Sprintf("%s %v %d %d", rel, fi.Mode(), fi.Size(), fi.ModTime().UnixNano()))
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

var position = regexp.MustCompile(`[^\s:]+:\d+:\d+`)

// result is what one command of a case did.
type result struct {
	problems []string
	pos      bool
	crash    bool
	wrote    bool
}

func runCase(gantry string, c bad, args []string, timeout time.Duration, maxRSS int64) result {
	var r result
	dir, err := os.MkdirTemp("", "sweep-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	files := map[string]string{}
	for k, v := range base {
		files[k] = v
	}
	for k, v := range c.files {
		files[k] = v
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			panic(err)
		}
	}
	if c.setup != "" {
		if out, err := exec.Command("sh", "-c", "cd "+dir+" && "+c.setup).CombinedOutput(); err != nil {
			r.problems = append(r.problems, fmt.Sprintf("setup failed: %v %s", err, out))
			return r
		}
	}
	before := snapshot(dir)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, gantry, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err = cmd.Run()
	text := out.String()
	code := cmd.ProcessState.ExitCode()
	switch {
	case ctx.Err() != nil:
		r.crash = true
		r.problems = append(r.problems, fmt.Sprintf("hung: killed after %v", timeout))
	case strings.Contains(text, "panic:") || strings.Contains(text, "goroutine ") || strings.Contains(text, "fatal error:"):
		r.crash = true
		r.problems = append(r.problems, "crashed: "+firstLines(text, 3))
	case code != 2:
		r.problems = append(r.problems, fmt.Sprintf("exit code %d, want 2 (%v): %s", code, err, firstLines(text, 3)))
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss*1024 > maxRSS {
		r.crash = true
		r.problems = append(r.problems, fmt.Sprintf("used %d MiB of memory", ru.Maxrss>>10))
	}
	r.pos = position.MatchString(text)
	if c.want == positioned && !r.pos && code == 2 {
		r.problems = append(r.problems, "no file:line:col in: "+firstLines(text, 3))
	}
	if c.mention != "" && !strings.Contains(text, c.mention) {
		r.problems = append(r.problems, fmt.Sprintf("the error does not mention %q: %s", c.mention, firstLines(text, 3)))
	}
	if after := snapshot(dir); after != before {
		r.wrote = true
		r.problems = append(r.problems, "wrote: "+diffLines(before, after))
	}
	return r
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	out := strings.Join(lines, " | ")
	if len(out) > 300 {
		out = out[:300] + "…"
	}
	return out
}

func diffLines(before, after string) string {
	had := map[string]bool{}
	for _, l := range strings.Split(before, "\n") {
		had[l] = true
	}
	var added []string
	for _, l := range strings.Split(after, "\n") {
		if !had[l] {
			added = append(added, strings.Fields(l)[0])
		}
	}
	return strings.Join(added, ", ")
}

func main() {
	gantry := flag.String("gantry", "gantry", "the gantry binary")
	timeout := flag.Duration("timeout", 60*time.Second, "time after which a case counts as a hang")
	maxMiB := flag.Int64("max-mib", 1024, "memory (MiB) past which a case counts as runaway")
	only := flag.String("run", "", "run only cases whose name holds this text")
	flag.Parse()
	tried, pos, crashes, writes, failed := 0, 0, 0, 0, 0
	for _, c := range cases() {
		if *only != "" && !strings.Contains(c.name, *only) {
			continue
		}
		commands := [][]string{c.args}
		// What validate refuses, deploy must refuse too, before it runs or
		// writes anything.
		if c.args[0] == "validate" {
			commands = append(commands, append([]string{"deploy"}, c.args[1:]...))
		}
		tried++
		var problems []string
		casePos := true
		for _, args := range commands {
			r := runCase(*gantry, c, args, *timeout, *maxMiB<<20)
			for _, p := range r.problems {
				problems = append(problems, args[0]+": "+p)
			}
			casePos = casePos && r.pos
			if r.crash {
				crashes++
			}
			if r.wrote {
				writes++
			}
		}
		if casePos {
			pos++
		}
		if len(problems) == 0 {
			fmt.Printf("ok    %s\n", c.name)
			continue
		}
		failed++
		fmt.Printf("FAIL  %s\n", c.name)
		for _, p := range problems {
			fmt.Printf("        %s\n", p)
		}
	}
	fmt.Printf("\nbad inputs tried %d, positioned error %d, crashes %d, writes on invalid input %d (cases refused wrongly: %d)\n", tried, pos, crashes, writes, failed)
	if failed > 0 {
		os.Exit(1)
	}
}
