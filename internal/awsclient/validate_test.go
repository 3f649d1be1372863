package awsclient

import "testing"

func TestValidateEndpoint(t *testing.T) {
	for s, ok := range map[string]bool{
		"http://127.0.0.1:4566": true, "https://s3.eu-west-1.amazonaws.com": true,
		"localhost:4566": false, "ftp://host": false, "http://": false, "/path": false,
	} {
		if got := ValidateEndpoint(s) == ""; got != ok {
			t.Errorf("ValidateEndpoint(%q) accepted %v, want %v", s, got, ok)
		}
	}
}

// sts:AssumeRole accepts 900 to 43200 seconds.
func TestValidateRoleDuration(t *testing.T) {
	for s, ok := range map[string]bool{
		"15m": true, "1h": true, "12h": true, "900s": true,
		"14m59s": false, "12h1s": false, "5m": false, "1 hour": false, "": false,
	} {
		if got := ValidateRoleDuration(s) == ""; got != ok {
			t.Errorf("ValidateRoleDuration(%q) accepted %v, want %v", s, got, ok)
		}
	}
}
