package main

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// testCluster returns the kubeconfig and kubectl of the test cluster that
// scripts/test.sh builds and starts (scripts/k8s). Without one the
// Kubernetes scenarios skip — except in CI, where a missing cluster is a
// failure: they must run there for real.
func testCluster(t testing.TB) (kubeconfig, kubectl string) {
	t.Helper()
	kubeconfig, kubectl = os.Getenv("GANTRY_TEST_KUBECONFIG"), os.Getenv("GANTRY_TEST_KUBECTL")
	if kubeconfig == "" || kubectl == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no test cluster: GANTRY_TEST_KUBECONFIG and GANTRY_TEST_KUBECTL are not set (scripts/test.sh starts one)")
		}
		t.Skip("no test cluster: run scripts/test.sh (or bench/k8s.sh), or start one with scripts/k8s/start.sh and set GANTRY_TEST_KUBECONFIG and GANTRY_TEST_KUBECTL")
	}
	return kubeconfig, kubectl
}

// TestKubernetesScripts runs the scenarios of testdata/k8s against the
// real API server of the test cluster. Each scenario gets a namespace of
// its own ($NS) and KUBECONFIG; kubectl is the cluster's own.
func TestKubernetesScripts(t *testing.T) {
	kubeconfig, kubectl := testCluster(t)
	if os.Getenv("CI") == "true" && os.Getenv("GANTRY_TEST_HELM") == "" {
		t.Fatal("no Helm CLI: GANTRY_TEST_HELM is not set (scripts/test.sh builds it)")
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "../../testdata/k8s",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			env.Setenv("KUBECONFIG", kubeconfig)
			path := filepath.Dir(kubectl) + string(os.PathListSeparator) + env.Getenv("PATH")
			if helm := os.Getenv("GANTRY_TEST_HELM"); helm != "" {
				// The Helm CLI shows what the helm plugin recorded; its
				// caches and settings stay in the scenario's folder.
				path = filepath.Dir(helm) + string(os.PathListSeparator) + path
				env.Setenv("HELM_CACHE_HOME", filepath.Join(env.WorkDir, ".helm", "cache"))
				env.Setenv("HELM_CONFIG_HOME", filepath.Join(env.WorkDir, ".helm", "config"))
				env.Setenv("HELM_DATA_HOME", filepath.Join(env.WorkDir, ".helm", "data"))
			}
			env.Setenv("PATH", path)
			root, err := filepath.Abs("../..")
			if err != nil {
				return err
			}
			env.Setenv("REPO", root)
			name := strings.TrimSuffix(filepath.Base(env.WorkDir), filepath.Ext(env.WorkDir))
			var b [3]byte
			_, _ = rand.Read(b[:])
			ns := "t-" + hex.EncodeToString(b[:])
			env.Setenv("NS", ns)
			env.Setenv("SCENARIO", name)
			env.Defer(func() {
				// Whatever a scenario left, its namespace goes (in the
				// background: the next scenarios need not wait for it).
				_ = exec.Command(kubectl, "--kubeconfig", kubeconfig, "delete", "namespace", ns, "--wait=false", "--ignore-not-found").Run()
			})
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitCode,
			"copydir":  cmdCopyDir,
			"waitfile": cmdWaitFile,
		},
	})
}
