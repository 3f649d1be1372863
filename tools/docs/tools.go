//go:build tools

// Package tools pins tfplugindocs.
package tools

import (
	_ "github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs"
)
