package component

import (
	"errors"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"
)

// smallLimits lowers the render's aggregate bounds for a test, so that
// reaching them takes milliseconds; TestRealBounds shows the real ones hold.
func smallLimits(t testing.TB) {
	saved := renderLimits
	renderLimits.rendered, renderLimits.produced, renderLimits.work = 8<<20, 64<<20, 1<<27
	t.Cleanup(func() { renderLimits = saved })
}

// TestRealBounds: with the bounds gantry runs with, a loop that never ends
// stops, and printing in a loop stops at the rendered cap, in bounded memory.
func TestRealBounds(t *testing.T) {
	if raceEnabled {
		t.Skip("a second of loops is a minute under the race detector; TestTemplateBombs covers the mechanism")
	}
	exp := expanded(t, "db.host", "h")
	for src, want := range map[string]string{
		`{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}`: "units of work",
		`{{ range until 100000 }}{{ repeat 1000000 "x" }}{{ end }}`:          "renders more than 67108864 bytes",
	} {
		var err error
		peak := peakHeap(func() { _, err = RenderString("bomb.gotemplate", src, TemplateGo, exp, nil) })
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("render %s = %v, want an error saying %q", src, err, want)
		}
		if peak > 1<<30 {
			t.Errorf("render %s: the heap reached %d MiB", src, peak>>20)
		}
	}
}

// peakHeap runs f and returns the largest heap seen meanwhile, sampled every
// millisecond: a bomb that grows the heap to gigabytes cannot slip between
// samples, and garbage is collected long before a gigabyte.
func peakHeap(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	return peak
}

// TestTemplateBombs renders templates that would exhaust memory or never
// end without the render's bounds: each must fail with an error naming the
// bound, at its position, having allocated far less than a gigabyte.
func TestTemplateBombs(t *testing.T) {
	smallLimits(t)
	exp := expanded(t, "db.host", "h")
	tests := []struct {
		name, src, want string
	}{
		{"until", `{{ until 100000000000 }}`, "until: 100000000000 is more than 100000"},
		{"nested ranges", `{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}`, "units of work"},
		{"range over a number", `{{ range 100000000000 }}{{ end }}`, "units of work"},
		{"printing in a loop", `{{ range until 100000 }}{{ repeat 1000000 "x" }}{{ end }}`, "renders more than 8388608 bytes"},
		{"building in a loop", `{{ range until 100000 }}{{ $x := repeat 1000000 "x" }}{{ end }}`, "build more than 67108864 bytes in all"},
		{"repeat", `{{ repeat 100000000000 "xx" }}`, "repeat: would build more than"},
		{"repeat overflow", `{{ repeat 9223372036854775807 "xx" }}`, "repeat: would build more than"},
		{"repeat negative", `{{ repeat -1 "x" }}`, "repeat: -1 is negative"},
		{"shared halves", `{{ $x := list "xxxxxxxx" }}{{ range until 100 }}{{ $x = list $x $x }}{{ end }}`, "list: builds a value of more than"},
		{"deep nesting", `{{ $x := list }}{{ range until 100 }}{{ $x = list $x }}{{ end }}`, "nested more than 64 deep"},
		{"printf width on a list", `{{ printf "%999999v" (until 100000) }}`, "printf: would build more than"},
		{"printf reused operand", `{{ printf (repeat 20 "%[1]999999d") 1 }}`, "printf: would build more than"},
		{"indent", `{{ indent 1000000000000 "x" }}`, "indent: would build more than"},
		{"nindent lines", `{{ nindent 100000 (repeat 1000 "\n") }}`, "indent: would build more than"},
		{"replace", `{{ replace "" (repeat 10000000 "y") (repeat 1000 "x") }}`, "replace: would build more than"},
		{"join", `{{ join (repeat 1000000 "s") (until 100000) }}`, "join: would build more than"},
		{"cat", `{{ $x := repeat 10000000 "x" }}{{ cat $x $x }}`, "cat: would build more than"},
		{"splitList", `{{ splitList "" (repeat 10000000 "x") }}`, "splitList: would build more than"},
		{"comparing in a loop", `{{ $a := repeat 10000000 "x" }}{{ $b := repeat 10000000 "x" }}{{ range until 100000 }}{{ if eq $a $b }}{{ end }}{{ end }}`, "units of work"},
		{"piped comparison", `{{ $a := repeat 10000000 "x" }}{{ range until 100000 }}{{ if $a | eq $a }}{{ end }}{{ end }}`, "units of work"},
		{"branching recursion", `{{ define "a" }}{{ if lt (len .) 60 }}{{ template "a" (cat . "x") }}{{ template "a" (cat . "x") }}{{ end }}{{ end }}{{ template "a" "" }}`, "units of work"},
		{"toJson of a large value", `{{ $x := list (repeat 10000000 "x") }}{{ toJson (list $x $x) }}`, "builds a value of more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			peak := peakHeap(func() { _, err = RenderString("bomb.gotemplate", tt.src, TemplateGo, exp, nil) })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("render = %v, want an error saying %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "bomb.gotemplate:1:") {
				t.Errorf("error %q has no position", err)
			}
			if peak > 1<<30 {
				t.Errorf("the heap reached %d MiB while rendering", peak>>20)
			}
		})
	}
}

// TestTemplateBoundsKeepOrdinaryTemplates: the bounds do not touch what
// configuration templates do, and the bounded functions give what sprig's do.
func TestTemplateBoundsKeepOrdinaryTemplates(t *testing.T) {
	exp := expanded(t, "db.host", "h", "db.port", "5432")
	tests := []struct{ src, want string }{
		{`{{ range $i := until 3 }}{{ printf "%02d-%s " $i $.db.host }}{{ end }}`, "00-h 01-h 02-h "},
		{`{{ printf "%[2]s:%[1]s" .db.port .db.host }}`, "h:5432"},
		{`{{ printf "%*d|%-5s|%.2f" 4 7 "ab" 3.14159 }}`, "   7|ab   |3.14"},
		{`{{ printf "%s" }}`, "%!s(MISSING)"},
		{`{{ print "a" 1 }}{{ println "b" }}`, "a1b\n"},
		{`{{ "a<b" | html }} {{ js "'" }} {{ urlquery "a b" }}`, "a&lt;b \\' a+b"},
		{`{{ indent 2 "a\nb" }}|{{ nindent 1 "c" }}`, "  a\n  b|\n c"},
		{`{{ replace "." "-" .db.host }}{{ join "," (list 1 "b") }}{{ cat "x" nil "y" }}`, "h1,bx y"},
		{`{{ quote "a" 1 }} {{ squote "b" }}`, `"a" "1" 'b'`},
		{`{{ splitList "," "a,b" }} {{ (split "," "a,b")._1 }}`, "[a b] b"},
		{`{{ uniq (list 1 "1" 1 (list 2) (list 2) "a") }}`, "[1 1 [2] a]"},
		{`{{ if eq .db.port "5432" }}pg{{ end }}{{ if .db.host | eq "h" }}!{{ end }}{{ index (dict "k" "v") "k" }}{{ slice "abc" 1 }}`, "pg!vbc"},
		{`{{ define "row" }}[{{ . }}]{{ end }}{{ range until 3 }}{{ template "row" . }}{{ end }}`, "[0][1][2]"},
		{`{{ range $k, $v := .db }}{{ $k }}={{ $v }};{{ else }}none{{ end }}`, "host=h;port=5432;"},
		{`{{ toString (list 1 2) }} {{ toJson (dict "a" (list 1)) }}`, `[1 2] {"a":[1]}`},
	}
	for _, tt := range tests {
		got, err := RenderString("ok.gotemplate", tt.src, TemplateGo, exp, nil)
		if err != nil || got != tt.want {
			t.Errorf("render %s = %q, %v; want %q", tt.src, got, err, tt.want)
		}
	}
}

func TestPlainTemplatesAreCapped(t *testing.T) {
	smallLimits(t)
	exp := expanded(t, "big", strings.Repeat("x", 100_000))
	src := strings.Repeat("${big}", 100)
	if _, err := RenderString("big.template", src, TemplateCurly, exp, nil); err == nil || !strings.Contains(err.Error(), "renders more than") {
		t.Errorf("curly: %v", err)
	}
	src = strings.Repeat("{{big}}", 100)
	if _, err := RenderString("big.template", src, TemplateMustache, exp, nil); err == nil || !strings.Contains(err.Error(), "renders more than") {
		t.Errorf("mustache: %v", err)
	}
}

// TestMustacheDeepSections: deep nesting renders (in time that grows with
// the template, not its square).
func TestMustacheDeepSections(t *testing.T) {
	exp := expanded(t, "on", "true", "off", "false")
	const depth = 200_000
	src := strings.Repeat("{{#on}}{{^off}}", depth) + "x" + strings.Repeat("{{/off}}{{/on}}", depth)
	got, err := RenderString("deep.template", src, TemplateMustache, exp, nil)
	if err != nil || got != "x" {
		t.Fatalf("render = %q, %v", got, err)
	}
}

// TestExecuteGoBounded: a lifecycle step's Go template (ExecuteGo, text/
// template's own functions only) is bounded as a template file is: a
// recursion that doubles at each level stops on its work, one that prints
// at its leaves on the rendered cap; a plain one renders, and a function
// only template files have is unknown here.
func TestExecuteGoBounded(t *testing.T) {
	smallLimits(t)
	tree := func(leaf string) string {
		return `{{define "x"}}{{if .}}{{template "x" (slice . 1)}}{{template "x" (slice . 1)}}{{else}}` + leaf + `{{end}}{{end}}{{template "x" "` + strings.Repeat("x", 42) + `"}}`
	}
	for _, tt := range []struct{ src, want string }{
		{tree(""), "units of work"},
		{tree(strings.Repeat("y", 150)), "renders more than"},
	} {
		var err error
		peak := peakHeap(func() { _, err = ExecuteGo("step", tt.src, map[string]any{}) })
		var limit *LimitError
		if !errors.As(err, &limit) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ExecuteGo(%.40q…) = %v, want a *LimitError saying %q", tt.src, err, tt.want)
		}
		if peak > 1<<30 {
			t.Errorf("ExecuteGo(%.40q…): the heap reached %d MiB", tt.src, peak>>20)
		}
	}
	out, err := ExecuteGo("step", `deploy {{.component}} {{printf "%03d" .index}}`, map[string]any{"component": "db", "index": 7})
	if err != nil || out != "deploy db 007" {
		t.Errorf("ExecuteGo = %q, %v; want \"deploy db 007\"", out, err)
	}
	if _, err := ExecuteGo("step", `{{ upper .component }}`, map[string]any{"component": "db"}); err == nil || !strings.Contains(err.Error(), `function "upper" not defined`) {
		t.Errorf("ExecuteGo with upper = %v, want function not defined", err)
	}
}
