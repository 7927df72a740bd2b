package secret

import "testing"

// TestHubNamed checks the rule the elaborated manifest marks secret outputs
// by against the names verified with the Hub CLI (agilestacks/hub 65b7e58):
// its LooksLikeSecret.
func TestHubNamed(t *testing.T) {
	for name, want := range map[string]bool{
		// Verified with hub elaborate.
		"api.password": true, "api.token": true, "someKey": true, "db_secret": true, "TLSCERT": true,
		"userPassword": true, "a:api.password": true, "stackSecret": true,
		"host": false, "cloud.sshKey": false,
		// The 24 suffixes, and what is not one of them.
		"x.cookie": true, "x_cert": true, "xToken": true, "X_KEY": true, "Secret": true,
		"password": false, "db-password": false, "x.keys": false, "monkey": false,
		// A |qualifier is not part of the name; a component: prefix is.
		"db.password|db": true, "cloud.sshKey|vm": false, "vm:cloud.sshKey": true, "a:password": false,
	} {
		if got := HubNamed(name); got != want {
			t.Errorf("HubNamed(%q) = %v, want %v", name, got, want)
		}
	}
}
