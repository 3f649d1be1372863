package awsclient

import (
	"net/url"
	"time"
)

// The checks of the `aws` block that need no API call, each a
// func(string) string saying what is wrong ("" when fine); the provider's
// schema turns them into validators.

// ValidateEndpoint returns what is wrong with an endpoint URL (aws.endpoint,
// aws.endpoints.*), or "": the SDK takes it as a client's BaseEndpoint, the
// scheme and host every request goes to, so it must be an absolute http or
// https URL.
func ValidateEndpoint(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "must be an absolute http:// or https:// URL"
	}
	return ""
}

// The lifetime of assumed-role credentials sts:AssumeRole accepts:
// DurationSeconds from 900 to 43200 (AWS STS API Reference, AssumeRole).
const (
	MinRoleDuration = 15 * time.Minute
	MaxRoleDuration = 12 * time.Hour
)

// ValidateRoleDuration returns what is wrong with assume_role.duration, or "".
func ValidateRoleDuration(s string) string {
	d, err := time.ParseDuration(s)
	if err != nil || d < MinRoleDuration || d > MaxRoleDuration {
		return "must be between 15m and 12h, such as 1h (what sts:AssumeRole accepts)"
	}
	return ""
}
