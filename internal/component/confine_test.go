package component

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// confineTree builds comp/ (the component) beside outside/, with links.
func confineTree(t *testing.T) (comp, outside string) {
	t.Helper()
	base := t.TempDir()
	comp, outside = filepath.Join(base, "comp"), filepath.Join(base, "outside")
	for _, d := range []string{comp, outside, filepath.Join(comp, "sub"), filepath.Join(outside, "deep")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"comp/a.conf.template":         "a",
		"comp/sub/b.conf.template":     "b",
		"comp/data.txt":                "d",
		"outside/x.conf.template":      "x",
		"outside/deep/y.conf.template": "y",
		"outside/victim":               "v",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(base, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return comp, outside
}

func link(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

func TestTemplateFilesConfined(t *testing.T) {
	tests := []struct {
		name    string
		links   map[string]string // link in comp -> target
		tmpl    manifest.Templates
		want    []string // files relative to comp
		wantErr []string
	}{
		{name: "inside", tmpl: manifest.Templates{Files: []string{"*.template"}, Directories: []string{"sub"}},
			want: []string{"a.conf.template", "sub/b.conf.template"}},
		{name: "missing directory holds no templates", tmpl: manifest.Templates{Files: []string{"*.template"}, Directories: []string{"sub", "azure"}},
			want: []string{"a.conf.template", "sub/b.conf.template"}},
		{name: "dot directory", tmpl: manifest.Templates{Directories: []string{"."}},
			want: []string{"a.conf.template", "sub/b.conf.template"}},
		{name: "climbing pattern", tmpl: manifest.Templates{Files: []string{"../outside/*.template", "*.template"}},
			wantErr: []string{`templates.files "../outside/*.template": expected a path inside the component`}},
		{name: "absolute pattern", tmpl: manifest.Templates{Files: []string{"/etc/*.template"}},
			wantErr: []string{`templates.files "/etc/*.template"`}},
		{name: "climbing directory", tmpl: manifest.Templates{Directories: []string{"../outside"}},
			wantErr: []string{`templates.directories "../outside": expected a path inside`}},
		{name: "linked template", links: map[string]string{"l.conf.template": "../outside/x.conf.template"},
			tmpl:    manifest.Templates{Files: []string{"*.template"}},
			wantErr: []string{"l.conf.template leads to ", "outside/x.conf.template, outside "}},
		{name: "linked folder", links: map[string]string{"ext": "../outside"},
			tmpl:    manifest.Templates{Files: []string{"ext/*.template"}, Directories: []string{"ext"}},
			wantErr: []string{"ext/x.conf.template leads to", `templates.directories "ext":`}},
		{name: "rendered file links out", links: map[string]string{"a.conf": "../outside/victim"},
			tmpl:    manifest.Templates{Files: []string{"*.template"}},
			wantErr: []string{"rendered file ", "a.conf leads to ", "outside/victim, outside"}},
		{name: "dangling rendered link", links: map[string]string{"a.conf": "../outside/nothing"},
			tmpl:    manifest.Templates{Files: []string{"*.template"}},
			wantErr: []string{"rendered file ", "a.conf"}},
		{name: "links inside are fine", links: map[string]string{"l.conf.template": "a.conf.template", "again": "sub"},
			tmpl: manifest.Templates{Files: []string{"*.template"}, Directories: []string{"again"}},
			want: []string{"a.conf.template", "again/b.conf.template", "l.conf.template"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			comp, _ := confineTree(t)
			for name, target := range tt.links {
				link(t, target, filepath.Join(comp, name))
			}
			files, err := TemplateFiles(comp, &tt.tmpl)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("TemplateFiles = %v, want an error", files)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var rel []string
			for _, f := range files {
				r, _ := filepath.Rel(comp, f)
				rel = append(rel, filepath.ToSlash(r))
			}
			if strings.Join(rel, ",") != strings.Join(tt.want, ",") {
				t.Errorf("TemplateFiles = %v, want %v", rel, tt.want)
			}
		})
	}
}

func TestLookupFileConfined(t *testing.T) {
	comp, outside := confineTree(t)
	link(t, "../outside/victim", filepath.Join(comp, "leak"))
	link(t, "../outside", filepath.Join(comp, "leakdir"))
	link(t, "data.txt", filepath.Join(comp, "alias"))
	base := filepath.Join(outside, "deep") // a second folder of the chain
	chain := []string{comp, base}
	tests := []struct {
		rel     string
		dir     bool
		want    string
		wantErr string
	}{
		{rel: "data.txt", want: filepath.Join(comp, "data.txt")},
		{rel: "alias", want: filepath.Join(comp, "alias")},
		{rel: "sub", dir: true, want: filepath.Join(comp, "sub")},
		{rel: "y.conf.template", want: filepath.Join(base, "y.conf.template")},
		{rel: "../outside/victim", wantErr: `lookupfile "../outside/victim": expected a path inside`},
		{rel: "/etc/passwd", wantErr: `lookupfile "/etc/passwd": expected a path inside`},
		{rel: "sub/../../outside", dir: true, wantErr: `lookupdir "sub/../../outside": expected a path inside`},
		{rel: "leak", wantErr: "leak leads to " + filepath.Join(outside, "victim")},
		{rel: "leakdir", dir: true, wantErr: "leakdir leads to " + outside},
		{rel: "missing", wantErr: "no file missing in"},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			got, err := LookupFile(chain, tt.rel, tt.dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("LookupFile(%q) = %q, %v; want error %q", tt.rel, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("LookupFile(%q) = %q, %v; want %q", tt.rel, got, err, tt.want)
			}
		})
	}
}
