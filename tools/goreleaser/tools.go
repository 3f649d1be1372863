//go:build tools

// Package tools pins goreleaser.
package tools

import (
	_ "github.com/goreleaser/goreleaser/v2"
)
