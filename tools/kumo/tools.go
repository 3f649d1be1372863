//go:build tools

// Package tools pins the kumo command for the test bed.
package tools

import (
	_ "github.com/sivchari/kumo/cmd/kumo"
)
