package helm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/Masterminds/semver/v3"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"sigs.k8s.io/yaml"

	"github.com/gantry-dev/gantry/internal/inputfile"
)

// chartRef is a chart as a config or the Hub's variables name it.
type chartRef struct {
	// Name is a path relative to the component folder (a folder or a
	// .tgz), or a chart's name in a repository ("name" or "repo/name").
	Name, Repo, Version string
}

func (r chartRef) String() string {
	s := r.Name
	if r.Version != "" {
		s += " " + r.Version
	}
	if r.Repo != "" {
		s += " of " + r.Repo
	}
	return s
}

// locate finds a chart on this machine, in the order the Hub's helm
// extension looks: the path itself, the component's charts/ folder (a
// folder or <name>-<version>.tgz), its .charts/ folder (where the Hub
// unpacks what it fetched), and Helm's repository cache, which helm repo
// add, helm repo update and helm pull fill. gantry does not download
// charts: a deploy runs with what is on the machine, so that a plan shows
// what will be deployed.
func locate(dir string, r chartRef) (string, error) {
	base := filepath.Base(r.Name)
	candidates := []string{filepath.Join(dir, filepath.FromSlash(r.Name))}
	for _, sub := range []string{"charts", ".charts"} {
		candidates = append(candidates, filepath.Join(dir, sub, base))
		if r.Version != "" {
			candidates = append(candidates, filepath.Join(dir, sub, base+"-"+strings.TrimPrefix(r.Version, "v")+".tgz"))
		}
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c, nil
		}
	}
	cache := repositoryCache()
	p, err := fromCache(cache, r)
	if err != nil {
		return "", fmt.Errorf("chart %s is not on this machine (looked in the component folder, its charts/ and .charts/, and Helm's repository cache %s): %w; fetch it first (helm repo add and helm pull, or put it in charts/) — gantry does not download charts", r, cache, err)
	}
	return p, nil
}

// repositoryCache is Helm's repository cache: $HELM_REPOSITORY_CACHE, else
// $XDG_CACHE_HOME/helm/repository, else ~/.cache/helm/repository.
func repositoryCache() string {
	if p := os.Getenv("HELM_REPOSITORY_CACHE"); p != "" {
		return p
	}
	if p := os.Getenv("XDG_CACHE_HOME"); p != "" {
		return filepath.Join(p, "helm", "repository")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "helm", "repository")
}

// index is what gantry reads of a repository's index.yaml.
type index struct {
	Entries map[string][]struct {
		Version string   `json:"version"`
		URLs    []string `json:"urls"`
	} `json:"entries"`
}

// fromCache finds a chart's package in Helm's repository cache through the
// cached indexes (<repo>-index.yaml): the version asked for (a version or a
// range like ~1.2), else the highest.
func fromCache(cache string, r chartRef) (string, error) {
	repo, name, hasRepo := strings.Cut(r.Name, "/")
	if !hasRepo {
		repo, name = "", r.Name
	}
	files, _ := filepath.Glob(filepath.Join(cache, "*-index.yaml"))
	if repo != "" {
		files = []string{filepath.Join(cache, repo+"-index.yaml")}
	}
	var want *semver.Constraints
	if r.Version != "" {
		c, err := semver.NewConstraint(r.Version)
		if err != nil {
			return "", fmt.Errorf("version %q is not a version or a range: %v", r.Version, err)
		}
		want = c
	}
	var best *semver.Version
	var bestFile string
	for _, f := range files {
		data, err := inputfile.Read(f, inputfile.MaxManifest)
		if err != nil {
			continue
		}
		var idx index
		if err := yaml.Unmarshal(data, &idx); err != nil {
			continue
		}
		for _, e := range idx.Entries[name] {
			v, err := semver.NewVersion(e.Version)
			if err != nil || len(e.URLs) == 0 || want != nil && !want.Check(v) || best != nil && !v.GreaterThan(best) {
				continue
			}
			best, bestFile = v, filepath.Join(cache, filepath.Base(e.URLs[0]))
		}
	}
	if best == nil {
		return "", errors.New("no cached index lists it")
	}
	if _, err := os.Stat(bestFile); err != nil {
		return "", fmt.Errorf("the index lists version %s but its package %s is not in the cache", best, filepath.Base(bestFile))
	}
	return bestFile, nil
}

// loadChart loads a chart folder or package, bounded as Helm bounds them,
// with its dependencies (charts/ inside it).
func loadChart(path string) (*chart.Chart, error) {
	ch, err := loader.Load(path)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", path, err)
	}
	return ch, nil
}
