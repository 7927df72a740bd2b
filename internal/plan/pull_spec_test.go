package plan

import "testing"

func TestRemoteText(t *testing.T) {
	for _, tc := range []struct{ remote, want string }{
		{"https://github.com/agilestacks/components.git", "https://github.com/agilestacks/components.git"},
		{"https://ghp_secret@github.com/org/repo.git", "https://***@github.com/org/repo.git"},
		{"https://user:p4ss@git.example.com/repo", "https://***@git.example.com/repo"},
		{"file:///srv/repo", "file:///srv/repo"},
		{"git@github.com:org/repo.git", "git@github.com:org/repo.git"}, // scp form: a user name, no secret
		{"../lib", "../lib"},
	} {
		if got := RemoteText(tc.remote); got != tc.want {
			t.Errorf("RemoteText(%q) = %q, want %q", tc.remote, got, tc.want)
		}
	}
}
