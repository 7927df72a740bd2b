package helm

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
)

// writeFiles writes files (slash-separated paths relative to dir) and
// returns dir.
func writeFiles(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// chartFiles are the files of a minimal chart: Chart.yaml and one
// ConfigMap template.
func chartFiles(name, version string) map[string]string {
	return map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: " + name + "\nversion: " + version + "\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n" +
			"data:\n  version: {{ .Chart.Version | quote }}\n",
	}
}

// writeChart writes a minimal chart folder at dir.
func writeChart(t testing.TB, dir, name, version string) string {
	t.Helper()
	return writeFiles(t, dir, chartFiles(name, version))
}

// packageChart packages a minimal chart into outDir as helm package does,
// <name>-<version>.tgz, and returns the package's path.
func packageChart(t testing.TB, outDir, name, version string) string {
	t.Helper()
	src := writeChart(t, t.TempDir(), name, version)
	ch, err := loader.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := chartutil.Save(ch, outDir)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(outDir, name+"-"+version+".tgz"); p != want {
		t.Fatalf("helm saved the package at %s, not %s", p, want)
	}
	return p
}

// writeIndex writes a repository's cached index, <repo>-index.yaml, from
// chart name → versions; each version's URL is <name>-<version>.tgz
// (urlBase prefixed when given, as real repositories give full URLs).
func writeIndex(t testing.TB, cache, repo, urlBase string, entries map[string][]string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nentries:\n")
	for name, versions := range entries {
		b.WriteString("  " + name + ":\n")
		for _, v := range versions {
			b.WriteString("  - name: " + name + "\n    version: " + v + "\n    urls:\n    - " + urlBase + name + "-" + v + ".tgz\n")
		}
	}
	b.WriteString("generated: \"2024-01-01T00:00:00Z\"\n")
	writeFiles(t, cache, map[string]string{repo + "-index.yaml": b.String()})
}

func TestLocateInComponentFolder(t *testing.T) {
	dir := t.TempDir()
	writeChart(t, filepath.Join(dir, "chart"), "web", "1.0.0")
	writeChart(t, filepath.Join(dir, "charts", "api"), "api", "0.1.0")
	writeChart(t, filepath.Join(dir, ".charts", "hub"), "hub", "0.1.0")
	packageChart(t, filepath.Join(dir, "charts"), "db", "2.1.0")
	packageChart(t, filepath.Join(dir, "pkg"), "cache", "3.0.0")
	// An empty cache: nothing found in the folder must not be found there.
	t.Setenv("HELM_REPOSITORY_CACHE", t.TempDir())

	tests := []struct {
		name string
		ref  chartRef
		want string // relative to dir
	}{
		{name: "folder by path", ref: chartRef{Name: "chart"}, want: "chart"},
		{name: "folder by ./path", ref: chartRef{Name: "./chart"}, want: "chart"},
		{name: "the component folder", ref: chartRef{Name: "."}, want: "."},
		{name: "package by path", ref: chartRef{Name: "pkg/cache-3.0.0.tgz"}, want: "pkg/cache-3.0.0.tgz"},
		{name: "charts/<name> folder", ref: chartRef{Name: "api"}, want: "charts/api"},
		{name: "charts/<name> for repo/name", ref: chartRef{Name: "stable/api", Repo: "https://charts.example.com"}, want: "charts/api"},
		{name: ".charts/<name> folder", ref: chartRef{Name: "hub"}, want: ".charts/hub"},
		{name: "charts/<name>-<version>.tgz", ref: chartRef{Name: "db", Version: "2.1.0"}, want: "charts/db-2.1.0.tgz"},
		{name: "version with v", ref: chartRef{Name: "bitnami/db", Version: "v2.1.0"}, want: "charts/db-2.1.0.tgz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := locate(dir, tt.ref)
			if err != nil {
				t.Fatalf("locate: %v", err)
			}
			if want := filepath.Join(dir, filepath.FromSlash(tt.want)); got != want {
				t.Errorf("locate = %s; want %s", got, want)
			}
			if tt.ref.Name == "." {
				return // the folder of the test's charts is no chart
			}
			if _, err := loadChart(got); err != nil {
				t.Errorf("loadChart(%s): %v", got, err)
			}
		})
	}
}

func TestLocateInRepositoryCache(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("HELM_REPOSITORY_CACHE", cache)
	t.Setenv("HELM_CONTENT_CACHE", t.TempDir())
	// No list of repositories: only the indexes' URLs say which is which.
	t.Setenv("HELM_REPOSITORY_CONFIG", filepath.Join(t.TempDir(), "repositories.yaml"))
	writeIndex(t, cache, "stable", "https://charts.example.com/stable/", map[string][]string{
		"web": {"0.1.0", "0.1.5", "0.2.0", "not-a-version"},
		"api": {"1.0.0"},
	})
	writeIndex(t, cache, "extra", "", map[string][]string{
		"web":   {"0.3.0"},
		"ghost": {"1.0.0"},
	})
	// A cache file that is not an index, and an index that is not YAML:
	// both ignored.
	writeFiles(t, cache, map[string]string{"stable-charts.txt": "web\napi\n", "broken-index.yaml": "entries: [\n"})
	for _, p := range [][2]string{{"web", "0.1.0"}, {"web", "0.1.5"}, {"web", "0.2.0"}, {"web", "0.3.0"}, {"api", "1.0.0"}} {
		packageChart(t, cache, p[0], p[1])
	}
	dir := t.TempDir()

	tests := []struct {
		name string
		ref  chartRef
		// want is the package's file in the cache; errs substrings of the
		// error instead.
		want string
		errs []string
	}{
		{name: "pinned version", ref: chartRef{Name: "web", Version: "0.1.0"}, want: "web-0.1.0.tgz"},
		{name: "pinned with v", ref: chartRef{Name: "web", Version: "v0.1.5"}, want: "web-0.1.5.tgz"},
		{name: "tilde range", ref: chartRef{Name: "web", Version: "~0.1"}, want: "web-0.1.5.tgz"},
		{name: "caret range", ref: chartRef{Name: "web", Version: "^0.2"}, want: "web-0.2.0.tgz"},
		{name: "range of two bounds", ref: chartRef{Name: "web", Version: ">=0.1.0 <0.3.0"}, want: "web-0.2.0.tgz"},
		{name: "highest of all indexes", ref: chartRef{Name: "web"}, want: "web-0.3.0.tgz"},
		{name: "repo/name reads that repo's index", ref: chartRef{Name: "stable/web"}, want: "web-0.2.0.tgz"},
		{name: "repo/name with version", ref: chartRef{Name: "stable/web", Version: "0.1.0"}, want: "web-0.1.0.tgz"},
		{name: "the other repo", ref: chartRef{Name: "extra/web"}, want: "web-0.3.0.tgz"},
		{name: "repo given as URL", ref: chartRef{Name: "api", Repo: "https://charts.example.com/stable"}, want: "api-1.0.0.tgz"},
		{
			name: "not in any index",
			ref:  chartRef{Name: "nope", Version: "1.0.0"},
			errs: []string{"chart nope 1.0.0 is not on this machine", "no cached index lists it", cache, "gantry does not download charts"},
		},
		{
			name: "version not listed",
			ref:  chartRef{Name: "web", Version: "9.9.9"},
			errs: []string{"no cached index lists it", "gantry does not download charts"},
		},
		{
			name: "version listed in another repo only",
			ref:  chartRef{Name: "extra/web", Version: "0.1.0"},
			errs: []string{"no cached index lists it"},
		},
		{
			name: "repo with no cached index",
			ref:  chartRef{Name: "missing/web"},
			errs: []string{"chart missing/web is not on this machine", "no cached index lists it"},
		},
		{
			name: "index lists it, package missing",
			ref:  chartRef{Name: "ghost"},
			errs: []string{"the index extra lists version 1.0.0, but Helm's caches do not have its package", "gantry does not download charts",
				"in the component folder, helm pull extra/ghost --version 1.0.0 --untar -d charts"},
		},
		{
			name: "a range in the advice",
			ref:  chartRef{Name: "stable/nope", Version: ">=1.0 <2"},
			errs: []string{"helm pull stable/nope --version '>=1.0 <2' --untar -d charts"},
		},
		{
			name: "OCI chart",
			ref:  chartRef{Name: "oci://registry.example.com/charts/web", Version: "1.0.0"},
			errs: []string{"an OCI registry has no index", "helm pull oci://registry.example.com/charts/web --version 1.0.0 --untar -d charts"},
		},
		{
			name: "OCI repository",
			ref:  chartRef{Name: "web", Repo: "oci://registry.example.com/charts/"},
			errs: []string{"an OCI registry has no index", "helm pull oci://registry.example.com/charts/web --untar -d charts"},
		},
		{
			name: "bad version",
			ref:  chartRef{Name: "web", Version: "one point two"},
			errs: []string{`version "one point two" is not a version or a range`},
		},
		{
			name: "repo in the message",
			ref:  chartRef{Name: "nope", Repo: "https://charts.example.com"},
			errs: []string{"chart nope of https://charts.example.com is not on this machine", "helm pull nope --repo https://charts.example.com --untar -d charts"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := checkLocate(t, dir, tt.ref, filepath.Join(cache, tt.want), tt.errs)
			if !ok {
				return
			}
			ch, err := loadChart(got)
			if err != nil {
				t.Fatal(err)
			}
			if v := strings.TrimSuffix(strings.TrimPrefix(tt.want, ch.Name()+"-"), ".tgz"); ch.Metadata.Version != v {
				t.Errorf("the package holds version %s; want %s", ch.Metadata.Version, v)
			}
		})
	}
}

// TestLocateInRepositoryOfURL: a chart whose repository URL is given (the
// config's repo:, the Hub's HELM_REPO) is looked up only in that
// repository's cached indexes — those Helm's repositories.yaml maps to the
// URL, and those it does not name whose charts' URLs are in the repository —
// never in another repository that has a chart of the same name.
func TestLocateInRepositoryOfURL(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("HELM_REPOSITORY_CACHE", cache)
	t.Setenv("HELM_CONTENT_CACHE", t.TempDir())
	config := filepath.Join(t.TempDir(), "repositories.yaml")
	t.Setenv("HELM_REPOSITORY_CONFIG", config)
	writeFiles(t, filepath.Dir(config), map[string]string{"repositories.yaml": `apiVersion: ""
generated: "0001-01-01T00:00:00Z"
repositories:
- name: alpha
  url: https://alpha.example.com/charts
- name: listed
  url: https://listed.example.com/charts/
- name: mirror
  url: https://mirror.example.com
`})
	// alpha has the highest web; beta (not in repositories.yaml) gives full
	// URLs; listed gives relative ones, which only repositories.yaml ties
	// to its URL; mirror's index points at beta's packages, but
	// repositories.yaml says it is another repository.
	writeIndex(t, cache, "alpha", "https://alpha.example.com/charts/", map[string][]string{"web": {"0.9.0"}})
	writeIndex(t, cache, "beta", "https://beta.example.com/charts/", map[string][]string{"web": {"0.1.0", "0.2.0"}, "api": {"1.0.0"}})
	writeIndex(t, cache, "listed", "", map[string][]string{"web": {"0.3.0"}})
	writeIndex(t, cache, "mirror", "https://beta.example.com/charts/", map[string][]string{"web": {"0.8.0"}})
	for _, v := range []string{"0.1.0", "0.2.0", "0.3.0", "0.8.0", "0.9.0"} {
		packageChart(t, cache, "web", v)
	}
	dir := t.TempDir()
	tests := []struct {
		name string
		ref  chartRef
		want string
		errs []string
	}{
		{name: "no repository: the highest of all", ref: chartRef{Name: "web"}, want: "web-0.9.0.tgz"},
		{name: "by the URLs of an unlisted index", ref: chartRef{Name: "web", Repo: "https://beta.example.com/charts"}, want: "web-0.2.0.tgz"},
		{name: "trailing slash", ref: chartRef{Name: "web", Repo: "https://beta.example.com/charts/", Version: "~0.1"}, want: "web-0.1.0.tgz"},
		{name: "by repositories.yaml", ref: chartRef{Name: "web", Repo: "https://alpha.example.com/charts"}, want: "web-0.9.0.tgz"},
		{name: "by repositories.yaml, relative URLs", ref: chartRef{Name: "web", Repo: "https://listed.example.com/charts"}, want: "web-0.3.0.tgz"},
		{name: "repo/name and its URL", ref: chartRef{Name: "alpha/web", Repo: "https://alpha.example.com/charts"}, want: "web-0.9.0.tgz"},
		{
			name: "repo/name of another URL",
			ref:  chartRef{Name: "alpha/web", Repo: "https://beta.example.com/charts"},
			errs: []string{"no cached index is of the repository https://beta.example.com/charts"},
		},
		{
			name: "no index of the repository",
			ref:  chartRef{Name: "web", Repo: "https://gamma.example.com/charts"},
			errs: []string{
				"chart web of https://gamma.example.com/charts is not on this machine",
				"no cached index is of the repository https://gamma.example.com/charts",
				config,
				"helm repo add NAME https://gamma.example.com/charts and helm repo update cache its index",
			},
		},
		{
			name: "a repository one level up is another",
			ref:  chartRef{Name: "web", Repo: "https://beta.example.com"},
			errs: []string{"no cached index is of the repository https://beta.example.com "},
		},
		{
			name: "the repository does not list the version",
			ref:  chartRef{Name: "web", Repo: "https://beta.example.com/charts", Version: "0.9.0"},
			errs: []string{"no cached index of the repository https://beta.example.com/charts lists it"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLocate(t, dir, tt.ref, filepath.Join(cache, tt.want), tt.errs)
		})
	}
	// A list of repositories that is not YAML is an error, not "none".
	writeFiles(t, filepath.Dir(config), map[string]string{"repositories.yaml": "repositories: [\n"})
	if _, err := locate(dir, chartRef{Name: "web", Repo: "https://beta.example.com/charts"}); err == nil || !strings.Contains(err.Error(), config) {
		t.Errorf("a broken repositories.yaml: %v", err)
	}
}

func TestLocatePrefersComponentFolder(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("HELM_REPOSITORY_CACHE", cache)
	writeIndex(t, cache, "stable", "", map[string][]string{"web": {"1.0.0"}})
	packageChart(t, cache, "web", "1.0.0")
	dir := t.TempDir()
	writeChart(t, filepath.Join(dir, "charts", "web"), "web", "0.0.1")
	got, err := locate(dir, chartRef{Name: "stable/web", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "charts", "web"); got != want {
		t.Errorf("locate = %s; want the component's %s", got, want)
	}
}

// TestRepositoryCache: Helm's caches are where helm keeps them, as its
// cli.New reads the environment.
func TestRepositoryCache(t *testing.T) {
	t.Setenv("HELM_REPOSITORY_CACHE", "/helm/cache")
	t.Setenv("HELM_CONTENT_CACHE", "/helm/content")
	t.Setenv("HELM_CACHE_HOME", "/helm/home")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if got := repositoryCache(); got != "/helm/cache" {
		t.Errorf("with HELM_REPOSITORY_CACHE: %s", got)
	}
	if got := contentCache(); got != "/helm/content" {
		t.Errorf("with HELM_CONTENT_CACHE: %s", got)
	}
	t.Setenv("HELM_REPOSITORY_CACHE", "")
	t.Setenv("HELM_CONTENT_CACHE", "")
	if got, want := repositoryCache(), filepath.Join("/helm/home", "repository"); got != want {
		t.Errorf("with HELM_CACHE_HOME: %s; want %s", got, want)
	}
	if got, want := contentCache(), filepath.Join("/helm/home", "content"); got != want {
		t.Errorf("with HELM_CACHE_HOME: %s; want %s", got, want)
	}
	t.Setenv("HELM_CACHE_HOME", "")
	if got, want := repositoryCache(), filepath.Join("/xdg", "helm", "repository"); got != want {
		t.Errorf("with XDG_CACHE_HOME: %s; want %s", got, want)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	home, err := os.UserHomeDir()
	if err != nil || runtime.GOOS != "linux" {
		t.Skip("no home folder, or not Linux")
	}
	if got, want := repositoryCache(), filepath.Join(home, ".cache", "helm", "repository"); got != want {
		t.Errorf("by default: %s; want %s", got, want)
	}
}

// TestLocateInContentCache: Helm 4 keeps the packages it fetched (helm
// install, upgrade, template, show) in its content cache by their digest,
// which the index gives.
func TestLocateInContentCache(t *testing.T) {
	cache, content := t.TempDir(), t.TempDir()
	t.Setenv("HELM_REPOSITORY_CACHE", cache)
	t.Setenv("HELM_CONTENT_CACHE", content)
	t.Setenv("HELM_REPOSITORY_CONFIG", filepath.Join(t.TempDir(), "repositories.yaml"))
	pkg := packageChart(t, t.TempDir(), "web", "0.2.0")
	data, err := os.ReadFile(pkg)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	writeFiles(t, cache, map[string]string{"stable-index.yaml": `apiVersion: v1
entries:
  web:
  - name: web
    version: 0.2.0
    digest: ` + digest + `
    urls: [https://charts.example.com/web-0.2.0.tgz]
  - name: web
    version: 0.1.0
    digest: sha256:` + strings.Repeat("ab", 32) + `
    urls: [https://charts.example.com/web-0.1.0.tgz]
`})
	stored := filepath.Join(content, digest[:2], digest+".chart")
	writeFiles(t, filepath.Dir(stored), map[string]string{filepath.Base(stored): string(data)})
	dir := t.TempDir()
	got, err := locate(dir, chartRef{Name: "web", Repo: "https://charts.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if got != stored {
		t.Errorf("locate = %s; want %s", got, stored)
	}
	if _, err := loadChart(got); err != nil {
		t.Error(err)
	}
	_, err = locate(dir, chartRef{Name: "stable/web", Version: "0.1.0"})
	if err == nil || !strings.Contains(err.Error(), "the index stable lists version 0.1.0, but Helm's caches do not have its package") {
		t.Errorf("a package no cache has: %v", err)
	}
}

func TestLoadChartError(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"broken/Chart.yaml": "apiVersion: v2\nname: broken\n"}) // no version
	for _, p := range []string{filepath.Join(dir, "absent"), filepath.Join(dir, "broken")} {
		if _, err := loadChart(p); err == nil || !strings.Contains(err.Error(), "load chart "+p) {
			t.Errorf("loadChart(%s) = %v; want an error naming it", p, err)
		}
	}
}

func TestChartRefString(t *testing.T) {
	tests := []struct {
		ref  chartRef
		want string
	}{
		{chartRef{Name: "web"}, "web"},
		{chartRef{Name: "web", Version: "1.2.3"}, "web 1.2.3"},
		{chartRef{Name: "web", Repo: "https://x"}, "web of https://x"},
		{chartRef{Name: "stable/web", Version: "~1", Repo: "https://x"}, "stable/web ~1 of https://x"},
	}
	for _, tt := range tests {
		if got := tt.ref.String(); got != tt.want {
			t.Errorf("%#v.String() = %q; want %q", tt.ref, got, tt.want)
		}
	}
}

// checkLocate runs locate on ref: it must fail with errors holding errs
// when some are given, else find want. ok says it found a chart to look
// at further.
func checkLocate(t *testing.T, dir string, ref chartRef, want string, errs []string) (got string, ok bool) {
	t.Helper()
	got, err := locate(dir, ref)
	if len(errs) > 0 {
		if err == nil {
			t.Fatalf("locate = %s; want an error", got)
		}
		for _, s := range errs {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q does not hold %q", err, s)
			}
		}
		return "", false
	}
	if err != nil {
		t.Fatalf("locate: %v", err)
	}
	if got != want {
		t.Errorf("locate = %s; want %s", got, want)
	}
	return got, true
}
