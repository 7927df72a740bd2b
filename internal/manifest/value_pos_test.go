package manifest

import "testing"

func TestPointAtValues(t *testing.T) {
	docs, diags := ParseBytes("f.yaml", []byte(`parameters:
  - name: a
    kind: secret
  - name: b
    parameters:
      - name: c
        env: [x]
list: [p, q]
`))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	entry := Pos{File: "f.yaml", Line: 2, Col: 5}
	nested := Pos{File: "f.yaml", Line: 6, Col: 9}
	for _, tc := range []struct {
		name  string
		field string
		at    Pos
		want  Pos
	}{
		{"a field of the entry", "parameters[0].kind", entry, Pos{"f.yaml", 3, 11}},
		{"a nested entry's field", "parameters[1].parameters[0].env", nested, Pos{"f.yaml", 7, 14}},
		{"an item of a list", "list[1]", Pos{"f.yaml", 1, 1}, Pos{"f.yaml", 8, 11}},
		{"a field not written (inherited)", "parameters[0].empty", entry, entry},
		{"already inside the field", "parameters[0].kind", Pos{"f.yaml", 3, 15}, Pos{"f.yaml", 3, 15}},
		{"not on the way", "parameters[1].name", entry, entry},
		{"an index past the list", "parameters[7].kind", entry, entry},
		{"another file", "parameters[0].kind", Pos{"g.yaml", 2, 5}, Pos{"g.yaml", 2, 5}},
		{"no path", "", entry, entry},
		{"a document's first key itself (an unknown field)", "parameters", Pos{"f.yaml", 1, 1}, Pos{"f.yaml", 1, 1}},
		{"the value of an entry's first field", "parameters[0].name", entry, Pos{"f.yaml", 2, 11}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := Diagnostics{{Pos: tc.at, Field: tc.field}}
			pointAtValues(docs[0], "", ds)
			if ds[0].Pos != tc.want {
				t.Errorf("at %v, want %v", ds[0].Pos, tc.want)
			}
		})
	}
	// A params document that is a list stands for the path "parameters".
	list, _ := ParseBytes("l.yaml", []byte("- name: a\n  env: 'A B'\n"))
	ds := Diagnostics{{Pos: Pos{"l.yaml", 1, 3}, Field: "parameters[0].env"}}
	pointAtValues(list[0], "parameters", ds)
	if want := (Pos{"l.yaml", 2, 8}); ds[0].Pos != want {
		t.Errorf("list document: at %v, want %v", ds[0].Pos, want)
	}
}
