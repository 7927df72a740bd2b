package build

import (
	"slices"
	"testing"
)

func TestDetectClouds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ []string
		want    []string
	}{
		{"nothing", []string{"HOME=/root"}, nil},
		{"aws by profile", []string{"AWS_PROFILE=dev"}, []string{"aws"}},
		{"present but empty counts", []string{"AWS_DEFAULT_REGION="}, []string{"aws"}},
		{"gcp brings gcs", []string{"GOOGLE_APPLICATION_CREDENTIALS=/k.json"}, []string{"gcp", "gcs"}},
		{"azure and aws", []string{"AZURE_TENANT_ID=t", "AWS_ACCESS_KEY_ID=k"}, []string{"aws", "azure"}},
		{"GANTRY_CLOUDS wins", []string{"AWS_PROFILE=dev", "GANTRY_CLOUDS= Azure ,gcp"}, []string{"azure", "gcp", "gcs"}},
		{"a typo enables nothing", []string{"GANTRY_CLOUDS=awz"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DetectClouds(tc.environ); !slices.Equal(got, tc.want) {
				t.Errorf("DetectClouds(%q) = %q, want %q", tc.environ, got, tc.want)
			}
		})
	}
}

func TestCloudOmitted(t *testing.T) {
	for _, tc := range []struct {
		enabled []string
		req     string
		want    bool
	}{
		{nil, "aws", false}, // nothing detected: every requirement stays
		{[]string{"aws"}, "aws", false},
		{[]string{"aws"}, "gcp", true},
		{[]string{"aws"}, "gcs", true},
		{[]string{"aws"}, "kubernetes", false},
		{[]string{"gcp", "gcs"}, "gcs", false},
	} {
		if got := CloudOmitted(tc.enabled, tc.req); got != tc.want {
			t.Errorf("CloudOmitted(%q, %q) = %v, want %v", tc.enabled, tc.req, got, tc.want)
		}
	}
}
