//go:build tools

// Package tools pins actionlint.
package tools

import (
	_ "github.com/rhysd/actionlint/cmd/actionlint"
)
