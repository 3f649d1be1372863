//go:build !benchprofile

package main

// startProfile does nothing outside a -tags benchprofile build (see
// profile_bench.go).
func startProfile() func() { return func() {} }
