package kube

import "testing"

func TestValidateHost(t *testing.T) {
	for s, ok := range map[string]bool{
		"https://ABC.gr7.eu-west-1.eks.amazonaws.com": true, "http://127.0.0.1:8080": true,
		"not a url": false, "127.0.0.1:6443": false, "socks5://proxy:1080": false,
	} {
		if got := ValidateHost(s) == ""; got != ok {
			t.Errorf("ValidateHost(%q) accepted %v, want %v", s, got, ok)
		}
	}
}

// client-go proxies over http, https and socks5 only.
func TestValidateProxyURL(t *testing.T) {
	for s, ok := range map[string]bool{
		"http://proxy:3128": true, "https://proxy": true, "socks5://127.0.0.1:1080": true,
		"ftp://proxy": false, "proxy:3128": false, "socks4://proxy": false,
	} {
		if got := ValidateProxyURL(s) == ""; got != ok {
			t.Errorf("ValidateProxyURL(%q) accepted %v, want %v", s, got, ok)
		}
	}
}
