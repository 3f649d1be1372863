// Command awsproxy is the test bed's AWS front (awsfront.ServeAWSProxy): it
// forwards every request to the emulator, logs S3 requests, and answers for
// the STS host names over TLS. The test bed builds and starts it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/awsfront"
)

func main() {
	var cfg awsfront.AWSProxyConfig
	flag.StringVar(&cfg.Listen, "listen", "", "host:port of the plain-HTTP front")
	flag.StringVar(&cfg.Target, "target", "", "the emulator's URL")
	flag.StringVar(&cfg.Log, "log", "", "the S3 request log (JSON lines)")
	flag.StringVar(&cfg.STS, "sts", "", "host:port of the TLS listener for the STS host names")
	flag.StringVar(&cfg.CertFile, "cert", "", "the TLS listener's certificate")
	flag.StringVar(&cfg.KeyFile, "key", "", "the TLS listener's key")
	flag.BoolVar(&cfg.DirMarkers, "dir-markers", true, `store keys ending in "/" under a reserved name (kumo cannot keep them apart)`)
	flag.StringVar(&cfg.DataFile, "data", "", "the front's data file (bucket regions, replication configurations)")
	flag.StringVar(&cfg.Region, "region", "us-east-1", "the test bed's region")
	flag.Parse()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := awsfront.ServeAWSProxy(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "awsproxy:", err)
		os.Exit(1)
	}
}
