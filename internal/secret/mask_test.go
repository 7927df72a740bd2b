package secret

import "testing"

func TestMasker(t *testing.T) {
	m := NewMasker("s3cret-pass", "abc", "s3cret")
	tests := []struct{ in, want string }{
		{"password is s3cret-pass here", "password is ***** here"},
		{"s3cret and s3cret-pass", "***** and *****"},
		{"abcdef holds abc but is not it", "abcdef holds ***** but is not it"},
		{"conn = user:abc@host", "conn = user:*****@host"},
		{"abc", "*****"},
		{"xabc abcx abc", "xabc abcx *****"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := m.Text(tt.in); got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := m.Value("abc", true); got != Mask {
		t.Errorf("Value(secret) = %q, want the mask", got)
	}
	m.Add("late-secret")
	if got := m.Text("a late-secret"); got != "a *****" {
		t.Errorf("after Add: %q", got)
	}
	var nilMasker *Masker
	if got := nilMasker.Text("x"); got != "x" {
		t.Errorf("nil masker changed text: %q", got)
	}
}
