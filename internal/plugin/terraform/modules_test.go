package terraform

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/plugin"
)

func TestModuleSources(t *testing.T) {
	tests := []struct {
		name, text string
		json       bool
		want       []string
	}{
		{name: "quoted label", text: `module "vpc" { source = "../vpc" }`, want: []string{"../vpc"}},
		{name: "unquoted label", text: "module vpc {\n  source = \"./vpc\"\n  cidr = \"}\"\n}", want: []string{"./vpc"}},
		{name: "two blocks", text: "module \"a\" { source = \"./a\" }\nmodule \"b\" {\n source = \"hashicorp/consul/aws\"\n}", want: []string{"./a", "hashicorp/consul/aws"}},
		{name: "commented out", text: "# module \"a\" { source = \"./a\" }\n/* module \"b\" { source = \"./b\" } */", want: nil},
		{name: "nested block is not a call", text: `resource "x" "y" { module "z" { source = "./z" } }`, want: nil},
		{name: "source of a nested block", text: `module "a" { dyn { source = "./no" } source = "./yes" }`, want: []string{"./yes"}},
		{name: "template source", text: `module "a" { source = "${var.x}/m" }`, want: nil},
		{name: "not tokenizable", text: `module "a" { source = "./a`, want: nil},
		{name: "json", json: true, text: `{"module": {"a": {"source": "./a"}, "b": {"source": "git::https://x"}}}`, want: []string{"./a", "git::https://x"}},
		{name: "json list", json: true, text: `{"module": [{"a": {"source": "../a"}}]}`, want: []string{"../a"}},
		{name: "json not terraform", json: true, text: `[1, 2]`, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			if tt.json {
				got = jsonModuleSources([]byte(tt.text))
			} else {
				got = nativeModuleSources(tt.text)
			}
			if tt.json {
				// A JSON object's keys come in any order.
				slices.Sort(got)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("sources (-want +got):\n%s", diff)
			}
		})
	}
}

// write makes the files (path: content) under root.
func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadsOutside(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string
		config any
		dir    string // the component's folder; stack/net without one
		want   []string
	}{
		{
			name: "local modules, transitively, and what they hold",
			files: map[string]string{
				"stack/net/main.tf":                   `module "vpc" { source = "../../modules/vpc" }`,
				"stack/net/local/main.tf":             `output "x" { value = 1 }`,
				"modules/vpc/main.tf":                 `module "subnet" { source = "./subnet" }`,
				"modules/vpc/subnet/main.tf":          `module "back" { source = "../" }`, // a cycle
				"modules/vpc/templates/user.tpl":      "x",
				"modules/vpc/examples/simple/main.tf": `module "vpc" { source = "../../" }`,
				"modules/vpc/examples/README":         "examples are modules of their own",
				"modules/vpc/.terraform/modules/x.tf": "cache",
				"modules/vpc/.git/HEAD":               "ref",
				"modules/other/main.tf":               "not called",
			},
			want: []string{"../../modules/vpc/examples/README", "../../modules/vpc/main.tf", "../../modules/vpc/subnet/main.tf", "../../modules/vpc/templates/user.tpl"},
		},
		{
			name: "a local module inside the folder adds nothing",
			files: map[string]string{
				"stack/net/main.tf":       `module "l" { source = "./local" }`,
				"stack/net/local/main.tf": `output "x" { value = 1 }`,
			},
			want: nil,
		},
		{
			name: "config dir outside",
			files: map[string]string{
				"stack/net/hub-component.yaml": "kind: component",
				"stack/infra/main.tf":          `module "m" { source = "git::https://example.com/m" }`,
				"stack/infra/vars.tf.json":     `{"module": {"j": {"source": "../jmod"}}}`,
				"stack/jmod/main.tf":           "",
			},
			config: map[string]any{"dir": "../infra"},
			want:   []string{"../infra/main.tf", "../infra/vars.tf.json", "../jmod/main.tf"},
		},
		{
			name: "a parent folder as the module: the component's own files are left out",
			files: map[string]string{
				"stack/main.tf":       "",
				"stack/net/main.tf":   "",
				"stack/net/x.tf":      "",
				"stack/README":        "",
				"stack/files/a.json":  "{}",
				"stack/other/main.tf": "another component",
				// What runs write: a stack's state and elaborated file,
				// terraform's lock file and state, a rendered template.
				"stack/hub.yaml.state":            "",
				"stack/hub.yaml.state.lock":       "",
				"stack/hub.yaml.elaborate":        "",
				"stack/.terraform.lock.hcl":       "",
				"stack/terraform.tfstate":         "",
				"stack/conf.auto.tfvars":          "rendered",
				"stack/conf.auto.tfvars.template": "region = ${region}",
			},
			config: map[string]any{"dir": ".."},
			want:   []string{"../README", "../conf.auto.tfvars.template", "../files/a.json", "../main.tf"},
		},
		{
			name: "an example calling its repository's root",
			files: map[string]string{
				"repo/examples/net/main.tf":   `module "vpc" { source = "../../" }`,
				"repo/examples/other/main.tf": "",
				"repo/main.tf":                `module "sub" { source = "./modules/sub" }`,
				"repo/modules/sub/main.tf":    "",
				"repo/modules/unused/main.tf": "",
				"repo/.github/ci.yml":         "",
			},
			dir:  "repo/examples/net",
			want: []string{"../../.github/ci.yml", "../../main.tf", "../../modules/sub/main.tf"},
		},
		{
			name:   "a dir given by a reference is not known before the run",
			files:  map[string]string{"stack/net/main.tf": ""},
			config: map[string]any{"dir": "${infra_dir}"},
			want:   nil,
		},
		{
			name:  "a module not there",
			files: map[string]string{"stack/net/main.tf": `module "gone" { source = "../gone" }`},
			want:  nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, tt.files)
			dir := "stack/net"
			if tt.dir != "" {
				dir = tt.dir
			}
			got := tf{}.ReadsOutside(filepath.Join(root, filepath.FromSlash(dir)), &plugin.Spec{Name: "terraform", Config: tt.config})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reads (-want +got):\n%s", diff)
			}
		})
	}
}

// A component folder reached through a symbolic link names what it reads
// from the folder it leads to, as the fingerprint's digest reads them.
func TestReadsOutsideThroughALink(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"real/net/main.tf": `module "m" { source = "../mod" }`,
		"real/mod/main.tf": "",
		"elsewhere/.keep":  "",
	})
	link := filepath.Join(root, "elsewhere", "net")
	if err := os.Symlink(filepath.Join(root, "real", "net"), link); err != nil {
		t.Fatal(err)
	}
	got := tf{}.ReadsOutside(link, &plugin.Spec{Name: "terraform"})
	if diff := cmp.Diff([]string{"../mod/main.tf"}, got); diff != "" {
		t.Errorf("reads (-want +got):\n%s", diff)
	}
}

// A module tree is followed to a bound, the same files every time.
func TestReadsOutsideBounded(t *testing.T) {
	defer func(files, folders int) { maxOutsideFiles, maxModuleFolders = files, folders }(maxOutsideFiles, maxModuleFolders)
	maxOutsideFiles, maxModuleFolders = 300, 5
	root := t.TempDir()
	files := map[string]string{"stack/net/main.tf": `module "m" { source = "../../big" }`}
	for i := range maxOutsideFiles + 50 {
		files[filepath.ToSlash(filepath.Join("big", "d"+string(rune('a'+i%26)), "f"+strconv.Itoa(i)))] = ""
	}
	files["big/main.tf"] = ""
	write(t, root, files)
	dir := filepath.Join(root, "stack", "net")
	first := tf{}.ReadsOutside(dir, &plugin.Spec{Name: "terraform"})
	if len(first) != maxOutsideFiles {
		t.Fatalf("%d files read, want the bound %d", len(first), maxOutsideFiles)
	}
	again := tf{}.ReadsOutside(dir, &plugin.Spec{Name: "terraform"})
	if !cmp.Equal(first, again) {
		t.Error("a second reading listed other files")
	}
	// A chain of modules longer than the bound on folders.
	chain := map[string]string{"stack/net/main.tf": `module "m" { source = "../../m0" }`}
	for i := range 20 {
		chain["m"+strconv.Itoa(i)+"/main.tf"] = `module "n" { source = "../m` + strconv.Itoa(i+1) + `" }`
	}
	root = t.TempDir()
	write(t, root, chain)
	got := tf{}.ReadsOutside(filepath.Join(root, "stack", "net"), &plugin.Spec{Name: "terraform"})
	if len(got) != 4 { // the component's own folder is the first of the 5
		t.Errorf("%d module folders outside followed, want 4 (the bound 5 less the component's): %v", len(got), got)
	}
}

// Special files in a module's folder are listed (links followed when the
// digest reads them); a source that climbs to / reads nothing there.
func TestReadsOutsideSpecialFiles(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"stack/net/main.tf": `module "m" { source = "../../mod" }` + "\n" + `module "up" { source = "` + strings.Repeat("../", 40) + `" }`,
		"mod/main.tf":       "",
	})
	if err := os.Symlink("/dev/zero", filepath.Join(root, "mod", "zero")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "mod", "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := tf{}.ReadsOutside(filepath.Join(root, "stack", "net"), &plugin.Spec{Name: "terraform"})
	// The pipe is no file to read; the link is one, to a device, which
	// the digest writes as such without reading it.
	if diff := cmp.Diff([]string{"../../mod/main.tf", "../../mod/zero"}, got); diff != "" {
		t.Errorf("reads (-want +got):\n%s", diff)
	}
}

func TestCheckEntry(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		config    any
		templated bool
		want      string // "" for none
	}{
		{name: "fine", files: map[string]string{"net/main.tf": `variable "size" {}`}, config: map[string]any{"vars": map[string]any{"size": 3}}},
		{name: "a string not closed", files: map[string]string{"net/main.tf": "a = \"b\n"}, want: "main.tf:1:5: a string is not closed on its line"},
		{name: "a variable not declared", files: map[string]string{"net/main.tf": ""}, config: map[string]any{"vars": map[string]any{"size": 3}},
			want: `config vars: the module declares no variable "size"`},
		{name: "no terraform files", files: map[string]string{"net/x": ""}, config: map[string]any{"dir": "tf"}, want: "no *.tf or *.tf.json files in tf"},
		{name: "an unknown config field", files: map[string]string{"net/main.tf": ""}, config: map[string]any{"binray": "tofu"}, templated: true,
			want: `unknown config field "binray"`},
		// Files the run may change before it reads them are not judged.
		{name: "rendered from templates", files: map[string]string{"net/main.tf.template": "x"}, templated: true},
		{name: "a stale render", files: map[string]string{"net/main.tf": "a = \"b\n", "net/main.tf.template": "a = 1"}, templated: true},
		{name: "a folder outside", files: map[string]string{"net/x": ""}, config: map[string]any{"dir": "../gen"}},
		{name: "a folder by reference", files: map[string]string{"net/x": ""}, config: map[string]any{"dir": "${where}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, tt.files)
			err := tf{}.CheckEntry(filepath.Join(root, "net"), &plugin.Spec{Name: "terraform", Config: tt.config}, tt.templated)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want none", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}
