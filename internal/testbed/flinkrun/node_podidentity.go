package flinkrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// podIdentityEnv is what EKS sets in a pod whose ServiceAccount has a Pod
// Identity association ("If a pod uses a service account that has an
// association, Amazon EKS sets environment variables in the containers of
// the pod", EKS API Reference, CreatePodIdentityAssociation): the Pod
// Identity Agent's URI and the pod's token file (PodIdentityAgent.PodEnv).
// EKS sets them when the pod is created, so an association made later
// reaches only new pods, as on EKS. The node runs one agent stand-in per
// role (the real agent, a DaemonSet, asks EKS Auth which role the pod's
// token maps to; the stand-in is started for that role). Nothing without
// NodeOptions.PodIdentity or without an association.
func (n *Node) podIdentityEnv(ctx context.Context, ns, sa, pod string) ([]string, error) {
	if n.o.PodIdentity == nil {
		return nil, nil
	}
	role, err := n.o.PodIdentity(ctx, ns, sa)
	if err != nil {
		return nil, fmt.Errorf("pod identity association of %s/%s: %w", ns, sa, err)
	}
	if role == "" {
		return nil, nil
	}
	n.mu.Lock()
	agent := n.agents[role]
	n.mu.Unlock()
	if agent == nil {
		// The agent lives as long as the node (Stop closes it), not as
		// long as this pod's start.
		if agent, err = StartPodIdentityAgent(context.WithoutCancel(ctx), n.env, role); err != nil {
			return nil, err
		}
		n.mu.Lock()
		if n.agents == nil {
			n.agents = map[string]*PodIdentityAgent{}
		}
		if prev := n.agents[role]; prev != nil {
			agent.Close()
			agent = prev
		} else {
			n.agents[role] = agent
		}
		n.mu.Unlock()
	}
	dir := filepath.Join(n.dir, ns, pod, "pods.eks.amazonaws.com")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	n.logf("node: pod %s/%s: EKS Pod Identity, role %s", ns, pod, role)
	return agent.PodEnv(dir, n.env)
}
