//go:build benchprofile

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
)

// startProfile, in a build with -tags benchprofile only: with
// FLINKSTATE_CPUPROFILE set to a directory, the provider process writes its
// CPU profile there (cpu-<pid>.pprof) when it exits, to see where a plan's
// time goes in the process terraform launches.
func startProfile() func() {
	dir := os.Getenv("FLINKSTATE_CPUPROFILE")
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", os.Getpid())))
	if err != nil {
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}
