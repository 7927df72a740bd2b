package helm

import (
	"encoding/hex"
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
// unpacks what it fetched), and Helm's caches: the indexes helm repo add
// and helm repo update cache, and the packages helm install, upgrade,
// template and show keep (fromCache). gantry does not download charts: a
// deploy runs with what is on the machine, so that a plan shows what will
// be deployed; the error says how to fetch it.
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
	found, err := fromCache(cache, r)
	if err != nil {
		return "", fmt.Errorf("chart %s is not on this machine (looked in the component folder, its charts/ and .charts/, and Helm's caches %s and %s): %w; fetch it into the component's charts/: in the component folder, %s — gantry does not download charts",
			r, cache, contentCache(), err, pullCommand(r, found))
	}
	return found.path, nil
}

// pullCommand is the helm command that fetches a chart into the component
// folder's charts/, where locate finds it whatever version it asks for.
// found, from the cache, names the repository and version when r does
// not.
func pullCommand(r chartRef, found cacheEntry) string {
	cmd := "helm pull "
	switch {
	case isOCI(r.Name):
		cmd += r.Name
	case isOCI(r.Repo):
		cmd += strings.TrimSuffix(r.Repo, "/") + "/" + r.Name
	case r.Repo != "":
		cmd += r.Name + " --repo " + r.Repo
	case strings.Contains(r.Name, "/"):
		cmd += r.Name
	case found.repo != "":
		cmd += found.repo + "/" + r.Name
	default:
		cmd += "REPO/" + r.Name
	}
	switch {
	case strings.ContainsAny(r.Version, " <>=~^*|,"):
		cmd += " --version '" + r.Version + "'"
	case r.Version != "":
		cmd += " --version " + r.Version
	case found.version != "":
		cmd += " --version " + found.version
	}
	return cmd + " --untar -d charts"
}

// isOCI reports whether a chart or repository is in an OCI registry.
func isOCI(s string) bool { return strings.HasPrefix(s, "oci://") }

// repositoryCache is Helm's repository cache, where helm repo add and helm
// repo update keep the indexes: $HELM_REPOSITORY_CACHE, else the
// repository folder of Helm's cache ($HELM_CACHE_HOME, $XDG_CACHE_HOME/helm,
// ~/.cache/helm), as Helm's cli.New reads them.
func repositoryCache() string {
	if p := os.Getenv("HELM_REPOSITORY_CACHE"); p != "" {
		return p
	}
	return helmpath.CachePath("repository")
}

// contentCache is Helm's content cache, where Helm 4 keeps the packages it
// fetched by their SHA-256 digest: $HELM_CONTENT_CACHE, else the content
// folder of Helm's cache, as Helm's cli.New reads them.
func contentCache() string {
	if p := os.Getenv("HELM_CONTENT_CACHE"); p != "" {
		return p
	}
	return helmpath.CachePath("content")
}

// cachedPackage is where Helm's caches keep a package an index lists:
// Helm 4's content cache, <xx>/<digest>.chart (downloader.DiskCache,
// which gantry does not import: its package brings Helm's OCI and plugin
// clients along), else, as Helm 3 kept it, the repository cache under its
// URL's file name. "" when neither has it.
func cachedPackage(cache string, e indexEntry) string {
	var candidates []string
	if d := strings.TrimPrefix(e.Digest, "sha256:"); len(d) == 64 {
		if _, err := hex.DecodeString(d); err == nil {
			candidates = append(candidates, filepath.Join(contentCache(), d[:2], d+".chart"))
		}
	}
	candidates = append(candidates, filepath.Join(cache, path.Base(e.URLs[0])))
	for _, c := range candidates {
		if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			return c
		}
	}
	return ""
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
	Entries map[string][]indexEntry `json:"entries"`
}

// indexEntry is a chart version an index lists.
type indexEntry struct {
	Version string   `json:"version"`
	URLs    []string `json:"urls"`
	// Digest is the package's SHA-256, its key in Helm's content cache.
	Digest string `json:"digest"`
}

// cacheEntry is what the cache told of a chart: its package (path, ""
// when the cache does not have it), the version the indexes chose and the
// name of the index that lists it.
type cacheEntry struct {
	path, version, repo string
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

// fromCache finds a chart's package in Helm's caches through the cached
// indexes (<repo>-index.yaml, indexesFor): the version asked for (a
// version or a range like ~1.2), else the highest. An OCI registry has no
// index, so its charts are never found there. On an error, the entry says
// what the indexes chose, if anything.
func fromCache(cache string, r chartRef) (cacheEntry, error) {
	if isOCI(r.Name) || isOCI(r.Repo) {
		return cacheEntry{}, errors.New("an OCI registry has no index for Helm to cache, so gantry finds its charts only in the component folder")
	}
	_, name, hasRepo := strings.Cut(r.Name, "/")
	if !hasRepo {
		name = r.Name
	}
	indexes, err := indexesFor(cache, r)
	if err != nil {
		return cacheEntry{}, err
	}
	var want *semver.Constraints
	if r.Version != "" {
		c, err := semver.NewConstraint(r.Version)
		if err != nil {
			return cacheEntry{}, fmt.Errorf("version %q is not a version or a range: %v", r.Version, err)
		}
		want = c
	}
	var best *semver.Version
	var bestEntry indexEntry
	var bestRepo string
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
			best, bestEntry, bestRepo = v, e, ix.repo
		}
	}
	switch {
	case !repoFound:
		return cacheEntry{}, fmt.Errorf("no cached index is of the repository %s (Helm's list of repositories %s names none with that URL, and no cached index's charts are there; helm repo add NAME %s and helm repo update cache its index)", r.Repo, repositoriesFile(), r.Repo)
	case best == nil && r.Repo != "":
		return cacheEntry{}, fmt.Errorf("no cached index of the repository %s lists it", r.Repo)
	case best == nil:
		return cacheEntry{}, errors.New("no cached index lists it")
	}
	found := cacheEntry{path: cachedPackage(cache, bestEntry), version: bestEntry.Version, repo: bestRepo}
	if found.path == "" {
		return found, fmt.Errorf("the index %s lists version %s, but Helm's caches do not have its package (helm pull does not put it there)", bestRepo, bestEntry.Version)
	}
	return found, nil
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
