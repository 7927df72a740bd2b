package action

import (
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
)

// TestFingerprintDiffers: a worker whose build of a run differs from the
// client's names the first thing that differs: a file of the stack, a
// component's folder, a step.
func TestFingerprintDiffers(t *testing.T) {
	client := &Fingerprint{
		Files: []string{rootMark + "/hub.yaml aaa"},
		Dirs:  []string{rootMark + "/a s1", rootMark + "/b s2"},
		Plan:  []byte(`{"nodes":[{"id":"x"},{"id":"y","label":"y"}],"edges":[],"components":{"a":{"action":"unchanged"},"b":{"action":"unchanged"},"c":{"action":"unchanged"}}}`),
	}
	tests := []struct {
		name   string
		worker Fingerprint
		want   string
	}{
		{"a file", Fingerprint{Files: []string{rootMark + "/hub.yaml bbb"}}, "the stack's files differ: hub.yaml is not the same"},
		{"a folder missing", Fingerprint{Files: client.Files, Dirs: []string{rootMark + "/a s1"}}, "a component's folder differs: b is missing here"},
		{"a folder more", Fingerprint{Files: client.Files, Dirs: append(append([]string{}, client.Dirs...), rootMark+"/c s3")}, "c is not in the client's checkout"},
		{"another folder", Fingerprint{Files: client.Files, Dirs: []string{rootMark + "/a s1", rootMark + "/z s2"}}, "the client has b where this worker has z"},
		{"a step", Fingerprint{Files: client.Files, Dirs: client.Dirs, Plan: []byte(`{"nodes":[{"id":"x"},{"id":"y","label":"other"}]}`)},
			`step 2 of the plan (y) differs: its label is "y" on the client, "other" here`},
		{"another step", Fingerprint{Files: client.Files, Dirs: client.Dirs, Plan: []byte(`{"nodes":[{"id":"x"},{"id":"z","label":"zz"}]}`)},
			`step 2 of the plan is y (y) on the client, z (zz) here`},
		{"a step's fields", Fingerprint{Files: client.Files, Dirs: client.Dirs, Plan: []byte(`{"nodes":[{"id":"x"},{"id":"y","label":"y","reason":"changed: parameter sow.inputs: ***** → *****","hidden":true}]}`)},
			`step 2 of the plan (y) differs: its hidden is none on the client, true here; its reason is none on the client, "changed: parameter sow.inputs: ***** → *****" here`},
		{"a component", Fingerprint{Files: client.Files, Dirs: client.Dirs, Plan: []byte(`{"nodes":[{"id":"x"},{"id":"z","label":"zz"}],"components":{"a":{"action":"unchanged"},"b":{"action":"redeploy","reason":"changed: parameter sow.inputs: ***** → *****"},"c":{"action":"deploy"}}}`)},
			`component b: unchanged on the client, redeploy here (changed: parameter sow.inputs: ***** → *****)`},
		{"steps more", Fingerprint{Files: client.Files, Dirs: client.Dirs, Plan: []byte(`{"nodes":[{"id":"x"}]}`)}, "the client's plan has 2 steps, this worker's 1"},
	}
	for _, tt := range tests {
		if got := tt.worker.differs(client); !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestCheckoutOf: the manifest and params files are found below the
// checkout's root; a params file outside it is refused.
func TestCheckoutOf(t *testing.T) {
	dir := t.TempDir()
	co, err := checkoutOf(dir+"/stack/hub.yaml", []string{dir + "/stack/p.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if co.root != dir+"/stack" || co.manifest != "hub.yaml" || len(co.params) != 1 || co.params[0] != "p.yaml" {
		t.Errorf("checkout %+v", co)
	}
	if _, err := checkoutOf(dir+"/stack/hub.yaml", []string{dir + "/other.yaml"}); err == nil || !strings.Contains(err.Error(), "lies outside the checkout") {
		t.Errorf("a params file outside: %v", err)
	}
}

// TestBundleDiffers: a command attaches to the run a workflow runs only
// when it asks for that run: the same verb, selection (in any order),
// --resume and --force; otherwise what differs is named.
func TestBundleDiffers(t *testing.T) {
	b := &Bundle{Verb: plan.VerbDeploy, Selection: build.Selection{Components: []string{"a", "b"}}}
	tests := []struct {
		name   string
		verb   string
		sel    build.Selection
		resume bool
		want   string
	}{
		{"the same run", plan.VerbDeploy, build.Selection{Components: []string{"b", "a"}}, false, ""},
		{"another verb", plan.VerbUndeploy, build.Selection{Components: []string{"a", "b"}}, false, "it runs deploy, this command undeploy"},
		{"every component", plan.VerbDeploy, build.Selection{}, false, "it runs -c a,b, this command every component"},
		{"resume", plan.VerbDeploy, build.Selection{Components: []string{"a", "b"}}, true, "its --resume is false, this command's true"},
		{"offset", plan.VerbDeploy, build.Selection{Components: []string{"a", "b"}, Offset: "b"}, false, "it runs -c a,b, this command -c a,b -o b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := b.differs(tt.verb, tt.sel, tt.resume, false, nil); got != tt.want {
				t.Errorf("differs = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestBundleDiffersInParameters: a command whose params files or -e give
// other values (or other parameters) than the run locked does not attach
// to it, and only the names are said, never a value; what the run
// generates, what it is, and what comes from outputs (which the run
// changes as it goes) are not compared.
func TestBundleDiffersInParameters(t *testing.T) {
	run := []*params.Value{
		{Name: "hub.deploymentId", Value: "abc", Source: params.SourceGenerated},
		{Name: "dns.domain", Value: "prod.example.com", Source: "params.yaml:3"},
		{Name: "db.password", Value: "s3cret-one", Source: "env:DB_PASSWORD", Secret: true},
		{Name: "db.host", Component: "app", Value: "", Source: "output:db", Pending: "db"},
		{Name: "replicas", Value: "3", Source: params.SourceDefault},
	}
	b := &Bundle{Verb: plan.VerbDeploy, Locked: run}
	same := func(edit func(v *params.Value) bool, extra ...*params.Value) *params.Locked {
		var out []*params.Value
		for _, v := range run {
			c := *v
			if edit != nil && !edit(&c) {
				continue
			}
			out = append(out, &c)
		}
		return params.Restore("s", "", append(out, extra...))
	}
	tests := []struct {
		name   string
		locked *params.Locked
		want   string
	}{
		{"the same values", same(nil), ""},
		{"another deployment id, an output known since", same(func(v *params.Value) bool {
			switch v.Name {
			case "hub.deploymentId":
				v.Value, v.Source = "def", params.SourceState
			case "db.host":
				v.Value, v.Pending = "db.internal", ""
			}
			return true
		}), ""},
		{"another domain", same(func(v *params.Value) bool {
			if v.Name == "dns.domain" {
				v.Value = "staging.example.com"
			}
			return true
		}), "its parameters differ from this command's: dns.domain"},
		{"another secret", same(func(v *params.Value) bool {
			if v.Name == "db.password" {
				v.Value = "s3cret-two"
			}
			return true
		}), "its parameters differ from this command's: db.password"},
		{"one missing, one more", same(func(v *params.Value) bool { return v.Name != "replicas" },
			&params.Value{Name: "zone", Value: "eu", Source: "env:ZONE"}), "its parameters differ from this command's: replicas, zone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := b.differs(plan.VerbDeploy, build.Selection{}, false, false, tt.locked)
			if got != tt.want {
				t.Errorf("differs = %q, want %q", got, tt.want)
			}
			if strings.Contains(got, "s3cret") {
				t.Errorf("differs shows a secret: %q", got)
			}
		})
	}
}
