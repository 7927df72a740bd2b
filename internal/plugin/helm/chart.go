package helm

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/Masterminds/semver/v3"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/helmpath"
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

// repositoriesFile is Helm's list of repositories (helm repo add):
// $HELM_REPOSITORY_CONFIG, else repositories.yaml in Helm's configuration
// folder ($HELM_CONFIG_HOME, $XDG_CONFIG_HOME/helm, ~/.config/helm).
func repositoriesFile() string {
	if p := os.Getenv("HELM_REPOSITORY_CONFIG"); p != "" {
		return p
	}
	return helmpath.ConfigPath("repositories.yaml")
}

// index is what gantry reads of a repository's index.yaml.
type index struct {
	Entries map[string][]struct {
		Version string   `json:"version"`
		URLs    []string `json:"urls"`
	} `json:"entries"`
}

// cachedIndex is a repository's index in Helm's cache.
type cachedIndex struct {
	// repo is the repository's name (<repo>-index.yaml); path the file.
	repo, path string
	// at, when set, keeps only the entries whose package is in that
	// repository (by URL): the index's repository is not in Helm's list,
	// so only its entries' URLs can say which repository they are of.
	at string
}

// indexesFor are the cached indexes a chart is looked up in: the one its
// "repo/" prefix names, else all of them; when the chart's repository URL is
// given (the config's repo:, the Hub's HELM_REPO), only those of that
// repository. Helm maps a repository's URL to the name of its cached index
// through repositories.yaml (helm repo add NAME URL), as helm dependency
// build does; an index that file does not name counts for its entries whose
// package URL is in the repository.
func indexesFor(cache string, r chartRef) ([]cachedIndex, error) {
	prefix, _, hasPrefix := strings.Cut(r.Name, "/")
	files, _ := filepath.Glob(filepath.Join(cache, "*-index.yaml"))
	var out []cachedIndex
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), "-index.yaml")
		if !hasPrefix || name == prefix {
			out = append(out, cachedIndex{repo: name, path: f})
		}
	}
	if hasPrefix && len(out) == 0 {
		// The error says the index lists nothing.
		out = []cachedIndex{{repo: prefix, path: filepath.Join(cache, prefix+"-index.yaml")}}
	}
	if r.Repo == "" {
		return out, nil
	}
	urls, err := repositoryURLs()
	if err != nil {
		return nil, err
	}
	var mine []cachedIndex
	for _, ix := range out {
		url, listed := urls[ix.repo]
		switch {
		case !listed:
			ix.at = r.Repo
		case !sameURL(url, r.Repo):
			continue
		}
		mine = append(mine, ix)
	}
	return mine, nil
}

// repositoryURLs are the repositories Helm's list names, name → URL; none
// when there is no list.
func repositoryURLs() (map[string]string, error) {
	p := repositoriesFile()
	data, err := inputfile.Read(p, inputfile.MaxManifest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("Helm's list of repositories %s: %s", p, inputfile.Problem(err))
	}
	var f struct {
		Repositories []struct {
			Name string `json:"name"`
			URL  string `json:"url"`
		} `json:"repositories"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("Helm's list of repositories %s: %v", p, err)
	}
	out := map[string]string{}
	for _, r := range f.Repositories {
		out[r.Name] = r.URL
	}
	return out, nil
}

// sameURL reports whether two repository URLs are the same, a trailing
// slash or a "." aside (Helm's urlutil.Equal).
func sameURL(a, b string) bool {
	norm := func(s string) string {
		u, err := url.Parse(s)
		if err != nil {
			return s
		}
		u.Path = path.Clean("/" + u.Path)
		return u.String()
	}
	return norm(a) == norm(b)
}

// inRepository reports whether a package's URL is in the repository at
// repo: next to its index, as helm repo index --url writes them.
func inRepository(pkg, repo string) bool {
	i := strings.LastIndex(pkg, "/")
	return i > 0 && strings.Contains(pkg, "://") && sameURL(pkg[:i], repo)
}

// fromCache finds a chart's package in Helm's repository cache through the
// cached indexes (<repo>-index.yaml, indexesFor): the version asked for (a
// version or a range like ~1.2), else the highest.
func fromCache(cache string, r chartRef) (string, error) {
	_, name, hasRepo := strings.Cut(r.Name, "/")
	if !hasRepo {
		name = r.Name
	}
	indexes, err := indexesFor(cache, r)
	if err != nil {
		return "", err
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
	// repoFound: an index of the repository asked for is in the cache.
	repoFound := r.Repo == ""
	for _, ix := range indexes {
		data, err := inputfile.Read(ix.path, inputfile.MaxManifest)
		if err != nil {
			continue
		}
		var idx index
		if err := yaml.Unmarshal(data, &idx); err != nil {
			continue
		}
		if ix.at == "" || ofRepository(idx, ix.at) {
			repoFound = true
		}
		for _, e := range idx.Entries[name] {
			v, err := semver.NewVersion(e.Version)
			if err != nil || len(e.URLs) == 0 || ix.at != "" && !inRepository(e.URLs[0], ix.at) ||
				want != nil && !want.Check(v) || best != nil && !v.GreaterThan(best) {
				continue
			}
			best, bestFile = v, filepath.Join(cache, filepath.Base(e.URLs[0]))
		}
	}
	switch {
	case !repoFound:
		return "", fmt.Errorf("no cached index is of the repository %s (Helm's list of repositories %s names none with that URL, and no cached index's charts are there); helm repo add NAME %s and helm repo update cache its index", r.Repo, repositoriesFile(), r.Repo)
	case best == nil && r.Repo != "":
		return "", fmt.Errorf("no cached index of the repository %s lists it", r.Repo)
	case best == nil:
		return "", errors.New("no cached index lists it")
	}
	if _, err := os.Stat(bestFile); err != nil {
		return "", fmt.Errorf("the index lists version %s but its package %s is not in the cache", best, filepath.Base(bestFile))
	}
	return bestFile, nil
}

// ofRepository reports whether an index lists a package in the repository
// at repo.
func ofRepository(idx index, repo string) bool {
	for _, versions := range idx.Entries {
		for _, e := range versions {
			if len(e.URLs) > 0 && inRepository(e.URLs[0], repo) {
				return true
			}
		}
	}
	return false
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
