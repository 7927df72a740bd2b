package plan

import (
	"net/url"
	"strings"
)

// Clone clones Remote at Ref (a branch or a tag; the remote's default branch
// when empty) into Into, a folder that does not exist or is empty; with
// Update, Into is a clone already and is brought up to date (a fast-forward
// pull) instead.
type Clone struct {
	Remote string `json:"remote"`
	Ref    string `json:"ref,omitempty"`
	Into   string `json:"into"`
	Update bool   `json:"update,omitempty"`
	// Force empties Into first when it holds something.
	Force bool `json:"force,omitempty"`
}

// Kind is KindClone.
func (Clone) Kind() Kind { return KindClone }

// Place puts SubDir of the clone its input step made into Dir, a
// component's folder: Dir is replaced when it holds sources an earlier pull
// placed there from the same repository folder, or with Force whatever it
// holds; a folder of other files is left alone and the step fails.
type Place struct {
	Component string `json:"component"`
	Clone     string `json:"clone"` // the folder the input step cloned into
	Remote    string `json:"remote"`
	Ref       string `json:"ref,omitempty"`
	SubDir    string `json:"subDir,omitempty"`
	Dir       string `json:"dir"`
	Force     bool   `json:"force,omitempty"`
}

// Kind is KindPlace.
func (Place) Kind() Kind { return KindPlace }

// RefText is how messages name a ref: " (REF)", or nothing for the
// remote's default branch.
func RefText(ref string) string {
	if ref == "" {
		return ""
	}
	return " (" + ref + ")"
}

// RemoteText is how messages, labels and files name a repository: its URL
// without the credentials it may carry (https://TOKEN@host/...).
func RemoteText(remote string) string {
	u, err := url.Parse(remote)
	if err != nil || u.User == nil {
		return remote
	}
	u.User = url.User("***")
	return strings.Replace(u.String(), "%2A%2A%2A", "***", 1)
}
