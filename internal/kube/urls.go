package kube

import (
	"net/url"
	"slices"
)

// ValidateHost returns what is wrong with an API server URL (kubernetes.host),
// or "": the provider wants it absolute, with the scheme, as a kubeconfig's
// cluster.server.
func ValidateHost(s string) string {
	if !absoluteURL(s, "http", "https") {
		return "must be an absolute http:// or https:// URL"
	}
	return ""
}

// proxySchemes are the proxy URL schemes client-go supports
// (k8s.io/client-go/tools/clientcmd/api/types.go, Cluster.ProxyURL: "URLs
// with "http", "https", and "socks5" schemes are supported").
var proxySchemes = []string{"http", "https", "socks5"}

// ValidateProxyURL returns what is wrong with kubernetes.proxy_url, or "".
func ValidateProxyURL(s string) string {
	if !absoluteURL(s, proxySchemes...) {
		return "must be an http://, https:// or socks5:// URL"
	}
	return ""
}

func absoluteURL(s string, schemes ...string) bool {
	u, err := url.Parse(s)
	return err == nil && slices.Contains(schemes, u.Scheme) && u.Host != ""
}
