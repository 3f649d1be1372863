//go:build tools

// Package tools pins golangci-lint, for make golangci and CI.
package tools

import (
	_ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
)
