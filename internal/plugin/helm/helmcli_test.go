package helm

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// helmCLI is the Helm CLI of the tests (scripts/helm/build.sh builds it,
// scripts/test.sh sets GANTRY_TEST_HELM), with its caches and settings in
// a folder of the test's own, which gantry reads too; the test is skipped
// without it, but not in CI.
func helmCLI(t *testing.T) func(dir string, args ...string) string {
	t.Helper()
	helm := os.Getenv("GANTRY_TEST_HELM")
	if helm == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no Helm CLI: GANTRY_TEST_HELM is not set (scripts/test.sh builds it)")
		}
		t.Skip("no Helm CLI: set GANTRY_TEST_HELM (scripts/helm/build.sh --print-bin)")
	}
	home := t.TempDir()
	for _, v := range []string{"HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"} {
		t.Setenv(v, filepath.Join(home, strings.ToLower(strings.TrimPrefix(v, "HELM_"))))
	}
	for _, v := range []string{"HELM_REPOSITORY_CACHE", "HELM_REPOSITORY_CONFIG", "HELM_CONTENT_CACHE"} {
		t.Setenv(v, "")
		os.Unsetenv(v) // helm takes an empty one as a path
	}
	return func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(helm, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
}

// TestLocateWhatHelmFetched: with a chart repository served over HTTP and
// the real Helm CLI, gantry finds the chart where Helm 4 keeps it after
// helm repo add, helm repo update and helm template (its content cache,
// under HELM_CACHE_HOME), and, before that, its error's advice fetches
// the chart where gantry finds it.
func TestLocateWhatHelmFetched(t *testing.T) {
	helm := helmCLI(t)
	served := t.TempDir()
	srv := httptest.NewServer(http.FileServer(http.Dir(served)))
	defer srv.Close()
	repo := srv.URL + "/charts"
	src := writeChart(t, filepath.Join(t.TempDir(), "web"), "web", "0.1.0")
	helm(served, "package", src, "-d", "charts")
	helm(served, "repo", "index", "charts", "--url", repo)
	helm(served, "repo", "add", "myrepo", repo)
	helm(served, "repo", "update")

	dir := t.TempDir()
	ref := chartRef{Name: "web", Repo: repo, Version: "0.1.0"}
	_, err := locate(dir, ref)
	if err == nil {
		t.Fatal("found a chart helm only listed")
	}
	_, advice, ok := strings.Cut(err.Error(), ": in the component folder, ")
	advice, _, _ = strings.Cut(advice, " — ")
	if !ok || !strings.HasPrefix(advice, "helm pull ") {
		t.Fatalf("error %q does not say what to run", err)
	}
	t.Logf("advice: %s", advice)
	helm(dir, strings.Fields(strings.TrimPrefix(advice, "helm "))...)
	for _, r := range []chartRef{ref, {Name: "web", Repo: repo}, {Name: "myrepo/web"}} {
		got, err := locate(dir, r)
		if want := filepath.Join(dir, "charts", "web"); err != nil || got != want {
			t.Errorf("after the advice, locate(%s) = %s, %v; want %s", r, got, err, want)
		}
	}
	if err := os.RemoveAll(filepath.Join(dir, "charts")); err != nil {
		t.Fatal(err)
	}

	// helm template fetches the package into Helm's content cache.
	helm(served, "template", "x", "myrepo/web", "--version", "0.1.0")
	content := filepath.Join(os.Getenv("HELM_CACHE_HOME"), "content")
	for _, r := range []chartRef{ref, {Name: "myrepo/web"}, {Name: "web", Version: "~0.1"}} {
		got, err := locate(dir, r)
		if err != nil {
			t.Fatalf("locate(%s) after helm template: %v", r, err)
		}
		if !strings.HasPrefix(got, content+string(filepath.Separator)) {
			t.Errorf("locate(%s) = %s; want a package of %s", r, got, content)
		}
		ch, err := loadChart(got)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Name() != "web" || ch.Metadata.Version != "0.1.0" {
			t.Errorf("locate(%s) found %s %s", r, ch.Name(), ch.Metadata.Version)
		}
	}
}
