package params

import "testing"

// FuzzExpand parses and evaluates arbitrary values: no panics, no hangs, a
// value without $ or # comes back unchanged, and one Check refuses does not
// evaluate.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{
		"plain", "${a}", "${db:host}", "${x/base64/json}", "#{a + 1}", "#{ {'k': '}'}['k'] }",
		"$${x} ##{y}", "${", "#{", "#{'", "#{[1,2].map(x, x * a)}", "${a/unbase64}", "#{params['a']}",
		"#{outputs['c']['o']}", "#{a.b.c}", "${a}${b}#{c}", "#{has(a.b)}", "#{has(params.a)}",
		"#{[{'k': 1}].exists(x, has(x.k))}", "#{cel.bind(y, a, has(y.z))}", "#{has(params.a.b.c)}", "#{params.a.b + params.a}",
	} {
		f.Add(s)
	}
	r := mapResolver{"a": "1", "b": "two", "c": "true", "x": "eA==", "c:o": "out", "a.b.c": "abc"}
	f.Fuzz(func(t *testing.T, src string) {
		tm, err := Parse(src)
		if err != nil {
			return
		}
		got, err := tm.Eval(r)
		if err == nil && tm.IsLiteral() && got != tm.Parts[0].Text {
			t.Fatalf("literal %q evaluated to %q", src, got)
		}
		// What the plan refuses, the run could not have evaluated.
		if cerr := Check(src); cerr != nil && err == nil {
			t.Fatalf("Check(%q) = %v, but it evaluates to %q", src, cerr, got)
		}
	})
}
