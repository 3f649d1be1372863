package deployop

import (
	"context"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// RefuseSessionDelete refuses, before anything is deleted, the destroy of
// session cluster ns/name (a deployment without a job; conf its
// flinkConfiguration) that FlinkSessionJobs still run on
// (kube.RefuseSessionDelete): nil when the destroy may go on.
func RefuseSessionDelete(ctx context.Context, dyn dynamic.Interface, ns, name string, conf map[string]string, timeout time.Duration) *Report {
	if rep, refused := kube.RefuseSessionDelete(ctx, dyn, ns, name, conf, timeout); refused {
		return &Report{Object: "FlinkDeployment " + ns + "/" + name, Report: rep}
	}
	return nil
}
