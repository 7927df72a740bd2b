package params

import "testing"

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
		got, changed := RenameComponents(tt.src, local)
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
