package params

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// allocated runs f and returns the bytes it allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// noTimeBounds lifts the time bounds of expressions for a test about sizes:
// on a slow or loaded machine they would stop an expression first.
func noTimeBounds(t *testing.T) {
	saved := exprTime
	t.Cleanup(func() { exprTime = saved })
	exprTime.one, exprTime.total = time.Hour, time.Hour
}

// maxBombAlloc is what refusing a bomb may allocate: a few values at the
// bound, never the gigabytes the bomb asks for.
const maxBombAlloc = 400 << 20

// Every CEL function that builds a value checks the size of what it would
// build before building it; each of these asks for far more than 16 MiB
// (or a million elements, or a quadratic distinct) in one expression.
func TestCELBuildersBounded(t *testing.T) {
	noTimeBounds(t)
	r := mapResolver{
		"big":  strings.Repeat("a", 2<<20),
		"mib":  strings.Repeat("a", 1<<20),
		"b13":  strings.Repeat("a", 13<<20),
		"ctl":  strings.Repeat("\x01", 6<<20),
		"word": "x",
	}
	nested := "'a'"
	for i := 0; i < 7; i++ {
		nested += ".replace('a', '" + strings.Repeat("a", 20) + "')"
	}
	tests := []struct{ name, expr, err string }{
		{"nested replace", nested, "replace: the result would be larger than 16 MiB"},
		{"replace with limit", "big.replace('a', big, 100)", "replace: the result would be larger than 16 MiB"},
		{"replace empty old", "big.replace('', 'xxxxxxxx')", "replace: the result would be larger than 16 MiB"},
		{"join separator", "lists.range(5000).map(i, 'x').join(mib)", "join: the result would be larger than 16 MiB"},
		{"join elements", "lists.range(20).map(i, mib).join()", "join: the result would be larger than 16 MiB"},
		{"format arguments", "'%s'.format([lists.range(100).map(i, mib)])", "format: the result would be larger than 16 MiB"},
		{"format precision", "'%.100000000f'.format([1.0])", "format: the result would be larger than 16 MiB"},
		{"quote", "strings.quote(ctl)", "strings.quote: the result would be larger than 16 MiB"},
		{"split", "big.split('')", "split: the result would have more than 100000 elements"},
		{"range", "lists.range(100000000)", "lists.range: 100000000 elements; at most 100000"},
		{"flatten", "lists.range(200).map(i, lists.range(1000)).flatten()", "flatten: the result would have more than 100000 elements"},
		{"distinct", "lists.range(5000).distinct()", "distinct: a list of 5000 elements; at most 3000"},
		{"base64", "base64.encode(bytes(b13))", "base64.encode: the result would be larger than 16 MiB"},
		{"concatenation", "big + big + big + big + big + big + big + big + big + big", "+: the result would be larger than 16 MiB"},
		{"result", "lists.range(1000).map(i, mib)", "the result would be larger than 16 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			start := time.Now()
			n := allocated(func() { _, err = Expand("#{"+tt.expr+"}", r) })
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("#{%s}: %v; want an error %q", tt.expr, err, tt.err)
			}
			if n > maxBombAlloc {
				t.Errorf("#{%s} allocated %d MiB before it was refused", tt.expr, n>>20)
			}
			t.Logf("%s: refused after %v, %d MiB", tt.name, time.Since(start), n>>20)
		})
	}
	// Within the bounds they still work.
	for expr, want := range map[string]string{
		"'ab'.replace('b', 'cd')":                "acd",
		"['a', 'b'].join('-')":                   "a-b",
		"'%s=%d'.format(['x', 2])":               "x=2",
		"'a,b'.split(',').size()":                "2",
		"lists.range(3).distinct()":              "0,1,2",
		"[[1], [2, 3]].flatten()":                "1,2,3",
		"base64.encode(bytes(word))":             "eA==",
		"strings.quote('a\"b')":                  `"a\"b"`,
		"word + word":                            "xx",
		"size(lists.range(1000).map(i, mib)[0])": "1048576",
	} {
		if got, err := Expand("#{"+expr+"}", r); err != nil || got != want {
			t.Errorf("#{%s} = %q, %v; want %q", expr, got, err, want)
		}
	}
}

// Forty parameters that each double the one before ask for a terabyte: the
// lock refuses the first that would pass 16 MiB, once, naming it, whether the
// doubling is ${} or CEL.
func TestLockExpansionBomb(t *testing.T) {
	noTimeBounds(t)
	for _, form := range []string{"${%s}${%s}", "#{%s + %s}"} {
		t.Run(form, func(t *testing.T) {
			var b strings.Builder
			b.WriteString("  - {name: e0, value: \"" + strings.Repeat("x", 64) + "\"}\n")
			for i := 1; i <= 40; i++ {
				prev := fmt.Sprintf("e%d", i-1)
				fmt.Fprintf(&b, "  - {name: e%d, value: \"%s\"}\n", i, fmt.Sprintf(form, prev, prev))
			}
			st := stackFrom(t, b.String())
			var diags manifest.Diagnostics
			n := allocated(func() { _, diags = Lock(LockInput{Stack: st, Env: env(), DeploymentID: "id"}) })
			errs := diags.Errors()
			if len(errs) != 1 {
				t.Fatalf("want one error, got %d:\n%v", len(errs), diags.Err())
			}
			msg := errs[0].String()
			if !strings.Contains(msg, `parameter "e19"`) || !strings.Contains(msg, "larger than 16 MiB") || !strings.HasPrefix(msg, "hub.yaml:") {
				t.Errorf("error does not name e19 (64 B × 2^19 = 32 MiB) at its position with the bound: %s", msg)
			}
			if n > maxBombAlloc {
				t.Errorf("the lock allocated %d MiB", n>>20)
			}
		})
	}
}

// Many parameters each under the bound add up to the lock's total budget:
// the first that passes it is named, once.
func TestLockTotalBudget(t *testing.T) {
	noTimeBounds(t)
	var b strings.Builder
	b.WriteString("  - {name: big, value: \"" + strings.Repeat("x", 2<<20) + "\"}\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "  - {name: w%02d, value: \"%s\"}\n", i, strings.Repeat("${big}", 8))
	}
	st := stackFrom(t, b.String())
	var diags manifest.Diagnostics
	n := allocated(func() { _, diags = Lock(LockInput{Stack: st, Env: env(), DeploymentID: "id"}) })
	errs := diags.Errors()
	if len(errs) != 1 {
		t.Fatalf("want one error, got %d:\n%v", len(errs), diags.Err())
	}
	if msg := errs[0].String(); !strings.Contains(msg, `parameter "w08"`) || !strings.Contains(msg, "more than 128 MiB in all") {
		t.Errorf("error does not name w08 (the ninth 16 MiB value) and the budget: %s", msg)
	}
	// Nine values of 16 MiB are built (with their builders' growth) before
	// the budget stops the lock; unbounded, the 40 would take 1.3 GB.
	if n > 2*maxBombAlloc {
		t.Errorf("the lock allocated %d MiB", n>>20)
	}
}

// Comprehensions are bounded in steps and in time, and so are all the
// expressions of a lock together: the first expression past the total is
// named, once, and those after it are not run. The bounds are lowered so
// that the test takes a fraction of a second; each expression here would
// run for half a minute unbounded, on any machine.
func TestExpressionTimeAndSteps(t *testing.T) {
	saved := exprTime
	defer func() { exprTime = saved }()
	big := strings.Repeat("a", 8<<20)
	r := mapResolver{"big": big}
	// Steps first, with all the time in the world.
	exprTime.one, exprTime.total = time.Hour, time.Hour
	if _, err := Expand("#{lists.range(20000).map(x, x).size()}", r); err == nil || !strings.Contains(err.Error(), "more than 20000 function calls") {
		t.Errorf("a long comprehension: %v", err)
	}
	// One expression's bound, with the total out of the way: the check
	// comes every few steps, and on a loaded machine a few steps of this
	// one can take longer than a small total.
	exprTime.one, exprTime.total = 50*time.Millisecond, time.Hour
	if _, err := Expand("#{lists.range(9000).map(x, big.size()).size()}", r); err == nil || !strings.Contains(err.Error(), "ran longer than 50ms") {
		t.Errorf("a slow comprehension: %v", err)
	}
	exprTime.one, exprTime.total = 50*time.Millisecond, 200*time.Millisecond
	if _, err := Expand("#{"+strings.Repeat("1 + ", 2000)+"1}", r); err == nil || !strings.Contains(err.Error(), "at most 4096") {
		t.Errorf("a long expression: %v", err)
	}

	var b strings.Builder
	b.WriteString("  - {name: big, value: \"" + strings.Repeat("a", 4<<20) + "\"}\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "  - {name: c%02d, value: \"#{lists.range(9000).map(x, big.size()).size()}\"}\n", i)
	}
	st := stackFrom(t, b.String())
	start := time.Now()
	_, diags := Lock(LockInput{Stack: st, Env: env(), DeploymentID: "id"})
	// Each expression runs at least 50ms before it is stopped, so at most
	// four are stopped on their own before the total is spent; the rest
	// are not run and not reported again.
	errs := diags.Errors()
	if n := len(errs); n < 1 || n > 5 || !strings.Contains(errs[n-1].String(), "took more than 200ms in all") {
		t.Fatalf("want at most five errors, the last naming the total time, got:\n%v", diags.Err())
	}
	t.Logf("refused after %v", time.Since(start))
}

// A value over the bound through an encoding is refused before it is built.
func TestEncodeBounded(t *testing.T) {
	r := mapResolver{"v": strings.Repeat("\x01", 13<<20)}
	for _, src := range []string{"${v/base64}", "${v/json}"} {
		if _, err := Expand(src, r); err == nil || !strings.Contains(err.Error(), "larger than 16 MiB") {
			t.Errorf("%s: %v; want the bound", src, err)
		}
	}
}
