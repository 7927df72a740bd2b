package kubernetes

import "testing"

// A chart's crds/ documents are under helm's rule (created only when
// missing, never owned or deleted); a CRD its templates render is the
// release's own, as any object.
func TestParseDocumentsCRDs(t *testing.T) {
	crd := func(name string) []byte {
		return []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: " + name + "}\n")
	}
	objs, err := parseDocuments([]Document{
		{Name: "web/crds/a.yaml", Data: crd("a.example.org"), CRD: true},
		{Name: "web/templates/b.yaml", Data: crd("b.example.org")},
		{Name: "web/templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]bool{ // crd, createOnly
		"a.example.org": {true, true},
		"b.example.org": {true, false},
		"cm":            {false, false},
	}
	if len(objs) != len(want) {
		t.Fatalf("%d objects, want %d", len(objs), len(want))
	}
	for _, o := range objs {
		w := want[o.u.GetName()]
		if o.crd != w[0] || o.createOnly != w[1] {
			t.Errorf("%s: crd %v, createOnly %v; want %v, %v", o.ref(), o.crd, o.createOnly, w[0], w[1])
		}
	}
}
