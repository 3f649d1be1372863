//go:build tools

// Package tools pins the terraform CLI (its main package is the module root).
package tools

import (
	_ "github.com/hashicorp/terraform"
)
