// Command etcd is the etcd server, built from the module graph of
// k8s.io/kubernetes so its version matches what that release is tested with.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
