package build

import (
	"slices"
	"strings"
)

// cloudVars are the variables whose presence says a cloud's credentials
// are set up, as the Hub CLI detects enabled clouds (a variable set to ""
// counts: the Hub looks it up, not at its value).
var cloudVars = map[string][]string{
	"aws":   {"AWS_PROFILE", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID"},
	"azure": {"AZURE_AUTH_LOCATION", "AZURE_TENANT_ID", "AZURE_RESOURCE_GROUP_NAME"},
	"gcp":   {"GOOGLE_APPLICATION_CREDENTIALS"},
}

// IsCloud reports whether a requirement names a cloud: aws, azure, gcp or
// gcs (Google Cloud Storage, enabled with gcp).
func IsCloud(req string) bool {
	switch req {
	case "aws", "azure", "gcp", "gcs":
		return true
	}
	return false
}

// DetectClouds returns the clouds environ enables, sorted: those of
// GANTRY_CLOUDS (a comma-separated list, the Hub's --clouds; unknown names
// are ignored) when it names any, else those whose credentials variables
// are present.
func DetectClouds(environ []string) []string {
	var out []string
	present := map[string]bool{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		present[k] = true
		if k == "GANTRY_CLOUDS" {
			for _, c := range strings.Split(v, ",") {
				// An unknown name enables nothing: a typo must not drop
				// every cloud requirement.
				if c = strings.ToLower(strings.TrimSpace(c)); IsCloud(c) && !slices.Contains(out, c) {
					out = append(out, c)
				}
			}
		}
	}
	if len(out) == 0 {
		for cloud, vars := range cloudVars {
			for _, v := range vars {
				if present[v] {
					out = append(out, cloud)
					break
				}
			}
		}
	}
	if slices.Contains(out, "gcp") && !slices.Contains(out, "gcs") {
		out = append(out, "gcs")
	}
	slices.Sort(out)
	return out
}

// CloudOmitted reports whether requirement req is dropped because its cloud
// is not enabled, as the Hub CLI drops them: only when at least one cloud
// is enabled (with none detected, every requirement stays).
func CloudOmitted(enabled []string, req string) bool {
	return IsCloud(req) && len(enabled) > 0 && !slices.Contains(enabled, req)
}
