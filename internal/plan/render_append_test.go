package plan

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fill sets every field of the value v points to, recursively, from r:
// strings with characters JSON escapes among plain ones, and each field
// now and then left zero, so that omitempty is exercised both ways.
func fill(r *rand.Rand, v reflect.Value) {
	words := []string{"", "a", "web/deploy", `q"uote\`, "<b>&</b>", "tab\tnew\nline", "\u2028é\x01", "\xff"}
	switch v.Kind() {
	case reflect.String:
		v.SetString(words[r.IntN(len(words))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 1)
	case reflect.Int:
		v.SetInt(int64(r.IntN(2000) - 1000))
	case reflect.Pointer:
		if r.IntN(4) == 0 {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(r, v.Elem())
	case reflect.Slice:
		switch r.IntN(4) {
		case 0:
			return // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return
		}
		n := 1 + r.IntN(3)
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fill(r, v.Index(i))
		}
	case reflect.Map:
		if r.IntN(4) == 0 {
			return
		}
		v.Set(reflect.MakeMap(v.Type()))
		for range r.IntN(4) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(r, k)
			fill(r, e)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i))
			}
		}
	}
}

// TestAppendLikeEncodingJSON: the hand encoders of plan.json write exactly
// what encoding/json writes, for components and nodes with every field
// filled or left empty at random — a field added to Component or jsonNode
// and not to the encoders fails here.
func TestAppendLikeEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		var c Component
		fill(r, reflect.ValueOf(&c).Elem())
		want, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(appendComponentJSON(nil, &c))); diff != "" {
			t.Fatalf("component %d (-encoding/json +appendComponentJSON):\n%s", i, diff)
		}

		var jn jsonNode
		fill(r, reflect.ValueOf(&jn).Elem())
		switch i % 3 {
		case 0:
			jn.Spec = Unchanged{Component: jn.Component, Verb: jn.Label}
		case 1:
			jn.Spec = Verb{Component: jn.ID, Verb: "deploy", Limits: &Limits{}}
		}
		// The node the plan holds, from the fields jsonNode shows.
		var n Node
		nv := reflect.ValueOf(&n).Elem()
		jv := reflect.ValueOf(jn)
		for f := range jv.NumField() {
			field := nv.FieldByName(jv.Type().Field(f).Name)
			if !field.IsValid() {
				t.Fatalf("jsonNode.%s is not a field of Node", jv.Type().Field(f).Name)
			}
			field.Set(jv.Field(f))
		}
		want, err = json.Marshal(jn)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendNodeJSON(nil, &n)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Fatalf("node %d (-encoding/json +appendNodeJSON):\n%s", i, diff)
		}
	}
}
