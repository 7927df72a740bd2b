package secret

import "strings"

// secretWords end the names that hold secrets (the Hub CLI's rule,
// cmd/hub/util LooksLikeSecret).
var secretWords = []string{"password", "secret", "key", "cert", "token", "cookie"}

// wordForm is a secret word as names end with it: the word, capitalised,
// in capitals, and the Hub's suffixes (after a dot or an underscore,
// capitalised, in capitals). Made once: Named runs for every output of
// every component, and building the forms on each call cost 6 % of
// gantry's CPU in a deploy of 2,000 components with 100 outputs each.
type wordForm struct {
	word, title, upper string
	hubSuffixes        [4]string
}

var wordForms = func() []wordForm {
	forms := make([]wordForm, len(secretWords))
	for i, w := range secretWords {
		title, upper := strings.ToUpper(w[:1])+w[1:], strings.ToUpper(w)
		forms[i] = wordForm{word: w, title: title, upper: upper, hubSuffixes: [4]string{"." + w, "_" + w, title, upper}}
	}
	return forms
}()

// notSecretNames look secret by the rule but are not: cloud.sshKey names an
// SSH key pair of the cloud account (a name like "dev-cluster"), not a key.
var notSecretNames = map[string]bool{"cloud.sshKey": true}

// Named reports whether a parameter or output name marks its value as
// secret, by the Hub CLI's rule: the name ends with one of the words
// password, secret, key, cert, token or cookie, after a dot or an
// underscore (db.password, aws_secret_key), capitalised (authApiSecret,
// tls.privateKey) or in capitals (API_KEY). gantry also takes a dash
// (db-password) and a name that is only the word (password, TOKEN). A
// component qualifier (name|component) or prefix (component:name) is
// ignored. cloud.sshKey is the one exception the Hub makes.
func Named(name string) bool {
	if i := strings.IndexByte(name, '|'); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		name = name[i+1:]
	}
	// A name that ends with none of the words' last letters is told at
	// once (Named runs for every parameter a component expands).
	if name == "" || !formEnds[name[len(name)-1]] {
		return false
	}
	return namedByWords(name)
}

// formEnds are the last bytes of the secret words' forms: a name that
// ends otherwise ends with none of them.
var formEnds = func() (ends [256]bool) {
	for _, f := range wordForms {
		for _, form := range []string{f.word, f.title, f.upper} {
			ends[form[len(form)-1]] = true
		}
	}
	return ends
}()

// namedByWords is Named's rule on a bare name (no qualifier, no prefix).
func namedByWords(name string) bool {
	if notSecretNames[name] {
		return false
	}
	for _, f := range wordForms {
		switch name {
		case f.word, f.title, f.upper:
			return true
		}
		if strings.HasSuffix(name, f.title) || strings.HasSuffix(name, f.upper) {
			return true
		}
		if strings.HasSuffix(name, f.word) {
			if c := name[len(name)-len(f.word)-1]; c == '.' || c == '_' || c == '-' {
				return true
			}
		}
	}
	return false
}

// HubNamed is the Hub CLI's LooksLikeSecret to the letter, for what must
// match the Hub's output (the outputs an elaborated manifest marks kind:
// secret): the name, up to a "|" qualifier that is not its first
// character, ends with one of the words after a dot or an underscore,
// capitalised or in capitals; a "component:" prefix is part of the name,
// and the bare word or a dash does not count. Named, which masks, takes
// more.
func HubNamed(name string) bool {
	if i := strings.IndexByte(name, '|'); i > 0 {
		name = name[:i]
	}
	if notSecretNames[name] {
		return false
	}
	for _, f := range wordForms {
		for _, suffix := range f.hubSuffixes {
			if strings.HasSuffix(name, suffix) {
				return true
			}
		}
	}
	return false
}
