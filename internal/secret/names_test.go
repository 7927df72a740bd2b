package secret

import "testing"

// TestNamed checks gantry's rule for secret names (the Hub's, with a dash
// and the bare word too) on the forms its comment names.
func TestNamed(t *testing.T) {
	for name, want := range map[string]bool{
		"db.password": true, "aws_secret_key": true, "authApiSecret": true, "tls.privateKey": true,
		"API_KEY": true, "db-password": true, "password": true, "TOKEN": true, "Cookie": true,
		"x.cert": true, "userToken": true, "SESSION_COOKIE": true,
		"db.password|db": true, "db:db.password": true, "a:b:api.token|c": true,
		"cloud.sshKey": false, "cloud.sshKey|vm": false, "vm:cloud.sshKey": false,
		"": false, "host": false, "db.port": false, "monkey": false, "x.keys": false,
		"keyring": false, "turkey": false, "api.url": false, "replicas": false, "tokens": false,
		"password|": true, "|password": false, "x:": false, "db.passwordx": false,
	} {
		if got := Named(name); got != want {
			t.Errorf("Named(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestFormEndsTurnAwayNoSecret: Named's quick refusal by the last byte
// never refuses a name the rule takes — over names built from every form
// of every word, other words, separators and tails.
func TestFormEndsTurnAwayNoSecret(t *testing.T) {
	words := []string{"host", "monkey", "keys", "Keyring", "x", ""}
	for _, f := range wordForms {
		words = append(words, f.word, f.title, f.upper)
	}
	taken := 0
	for _, head := range []string{"", "db", "auth", "API", "cloud.ssh"} {
		for _, sep := range []string{"", ".", "_", "-"} {
			for _, w := range words {
				for _, tail := range []string{"", "s", "1", "Key", "_ID"} {
					name := head + sep + w + tail
					if !namedByWords(name) {
						continue
					}
					taken++
					if !formEnds[name[len(name)-1]] {
						t.Errorf("%q is secret by the rule, but its last byte turns it away", name)
					}
					if !Named(name) {
						t.Errorf("Named(%q) = false, the rule says true", name)
					}
				}
			}
		}
	}
	if taken < 100 {
		t.Errorf("only %d names were secret by the rule: the test says little", taken)
	}
}
