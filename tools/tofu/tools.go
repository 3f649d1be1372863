//go:build tools

// Package tools pins OpenTofu's CLI (cmd/tofu).
package tools

import (
	_ "github.com/opentofu/opentofu/cmd/tofu"
)
