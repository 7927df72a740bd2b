package secret

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
)

// encodings are the forms a secret commonly takes on its way into text
// gantry shows, without anyone meaning to show it: an argument written
// ${db.password/base64} or #{db.password.upperAscii()}, a URL that quotes
// it escaped in an error (Get "http://host/p/Tk%3C…"), a JSON document
// that escapes its quotes, a template's printf "%x". The masker masks
// them as it masks the value.
func encodings(v string) []string {
	path := (&url.URL{Path: v}).EscapedPath()
	quoted, _ := json.Marshal(v) // <, > and & escaped, as encoding/json writes them
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	unescapedHTML := strings.TrimSuffix(plain.String(), "\n")
	out := []string{
		strings.ToUpper(v),
		strings.ToLower(v),
		url.PathEscape(v),
		path,
		url.QueryEscape(v),
		base64.StdEncoding.EncodeToString([]byte(v)),
		base64.RawStdEncoding.EncodeToString([]byte(v)),
		base64.URLEncoding.EncodeToString([]byte(v)),
		base64.RawURLEncoding.EncodeToString([]byte(v)),
		hex.EncodeToString([]byte(v)),
		string(quoted[1 : len(quoted)-1]),
		unescapedHTML[1 : len(unescapedHTML)-1],
	}
	kept := out[:0]
	for _, e := range out {
		if e != v {
			kept = append(kept, e)
		}
	}
	return kept
}
