package params

import (
	"strings"
	"testing"
)

func TestRenameComponents(t *testing.T) {
	local := func(c string) (string, bool) {
		if c == "leaf" || c == "inner.leaf" || c == "é" {
			return "mid." + c, true
		}
		return "", false
	}
	tests := []struct {
		src, want string
	}{
		{"plain", "plain"},
		{"got ${out}", "got ${out}"},
		{"got ${leaf:out}", "got ${mid.leaf:out}"},
		{"${ leaf:out/base64/json }", "${mid.leaf:out/base64/json}"},
		{"${inner.leaf:out}", "${mid.inner.leaf:out}"},
		{"${base:out} ${leaf:out}", "${base:out} ${mid.leaf:out}"},
		{"${msg|leaf}", "${msg|mid.leaf}"},
		{"${msg|base}", "${msg|base}"},
		{"$${leaf:out} ${leaf:out} ##{x}", "$${leaf:out} ${mid.leaf:out} ##{x}"},
		{`#{outputs["leaf"]["out"]}`, `#{outputs["mid.leaf"]["out"]}`},
		{`#{outputs['leaf'].out + outputs['base'].out}`, `#{outputs["mid.leaf"].out + outputs['base'].out}`},
		{`#{outputs.leaf.out}`, `#{outputs["mid.leaf"].out}`},
		{`#{outputs . leaf . out}`, `#{outputs ["mid.leaf"] . out}`},
		{`#{has(outputs.leaf.out) ? "é" : outputs.base.out}`, `#{has(outputs["mid.leaf"].out) ? "é" : outputs.base.out}`},
		{`#{"é" + outputs["é"].out}`, `#{"é" + outputs["mid.é"].out}`},
		{`#{params["msg|leaf"] + params.leaf}`, `#{params["msg|mid.leaf"] + params.leaf}`},
		{`#{leaf.out + "leaf"}`, `#{leaf.out + "leaf"}`},
		{`#{outputs[r"leaf"].out + outputs["le\x61f"].out}`, `#{outputs[r"leaf"].out + outputs["le\x61f"].out}`},
		{"${leaf:out", "${leaf:out"},
		{"#{outputs[}", "#{outputs[}"},
	}
	for _, tt := range tests {
		got, changed, _ := RenameComponents(tt.src, local)
		if got != tt.want || changed != (tt.src != tt.want) {
			t.Errorf("RenameComponents(%q) = %q, %v; want %q", tt.src, got, changed, tt.want)
		}
		if changed {
			if err := Check(got); err != nil {
				t.Errorf("RenameComponents(%q) = %q, which does not parse: %v", tt.src, got, err)
			}
		}
	}
}

// TestRenameComponentsUnscoped: the reads RenameComponents cannot rename,
// which would read the component of the name as written (the top stack's,
// for a nested stack), are returned; the forms it renames, names it does
// not rename and reads that name no component are not.
func TestRenameComponentsUnscoped(t *testing.T) {
	local := func(c string) (string, bool) {
		if c == "leaf" {
			return "mid." + c, true
		}
		return "", false
	}
	tests := []struct {
		src  string
		want []string // Read: Why
	}{
		{`${leaf:out} ${msg|leaf} #{outputs["leaf"].out + outputs.leaf.out + params["msg|leaf"]}`, nil},
		{`#{has(outputs.leaf.out) && has(outputs.leaf) ? params.msg + params["msg"] + params.db.host : ""}`, nil},
		{`#{outputs[r"base"].out + outputs.base.out + params['''msg|base''']}`, nil},
		{`#{["leaf"].map(c, outputs[c].out).join(",")}`, []string{"outputs[c]: the key is computed"}},
		{`#{outputs["le" + "af"].out} #{params["msg|" + "leaf"]}`, []string{`outputs["le" + "af"]: the key is computed`, `params["msg|" + "leaf"]: the key is computed`}},
		{`#{outputs[r"leaf"].out + outputs["le\x61f"].out}`, []string{
			`outputs["leaf"]: "leaf" is written with escapes or in a raw or triple-quoted string`,
			`outputs["leaf"]: "leaf" is written with escapes or in a raw or triple-quoted string`,
		}},
		{`#{params[r"msg|leaf"]}`, []string{`params["msg|leaf"]: "leaf" is written with escapes or in a raw or triple-quoted string`}},
		{"#{outputs.`leaf`.out}", []string{"outputs.leaf: `leaf` is quoted"}},
		{`#{dyn(outputs).leaf.out}`, []string{"outputs: used as a whole, not read by a name"}},
		{`#{cel.bind(o, outputs, o.leaf.out)}`, []string{"outputs: used as a whole, not read by a name"}},
		{`#{"msg|leaf" in params}`, []string{"params: used as a whole, not read by a name"}},
	}
	for _, tt := range tests {
		_, _, us := RenameComponents(tt.src, local)
		var got []string
		for _, u := range us {
			got = append(got, u.Read+": "+u.Why)
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("RenameComponents(%q) unscoped:\n%s\nwant:\n%s", tt.src, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}
}
