//go:build tools

// Package tools pins terraform 1.8.5 (its main package is the module root).
package tools

import (
	_ "github.com/hashicorp/terraform"
)
