package testbed

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// DemoIssuer is the OIDC issuer of the test bed's pretend EKS cluster.
const DemoIssuer = "https://oidc.eks.us-east-1.amazonaws.com/id/FLINKSTATETESTBED"

// Prereqs creates, idempotently, what a real EKS cluster with the Flink
// operator would already have and examples/complete expects: the namespace,
// and the cluster's IAM OIDC provider. It returns the provider's ARN.
func Prereqs(ctx context.Context, env Env, namespace string) (string, error) {
	kc, err := kube.New(kube.Config{ConfigPath: env.Kubeconfig})
	if err != nil {
		return "", err
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": namespace}}}
	_, err = kc.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx, ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	ac, err := newEnvAWS(ctx, env)
	if err != nil {
		return "", err
	}
	list, err := ac.IAM.ListOpenIDConnectProviders(ctx, &iam.ListOpenIDConnectProvidersInput{})
	if err != nil {
		return "", fmt.Errorf("listing OIDC providers: %w", err)
	}
	host := strings.TrimPrefix(DemoIssuer, "https://")
	for _, p := range list.OpenIDConnectProviderList {
		if strings.HasSuffix(aws.ToString(p.Arn), ":oidc-provider/"+host) {
			return aws.ToString(p.Arn), nil
		}
	}
	out, err := ac.IAM.CreateOpenIDConnectProvider(ctx, &iam.CreateOpenIDConnectProviderInput{
		Url: aws.String(DemoIssuer), ClientIDList: []string{"sts.amazonaws.com"}, ThumbprintList: []string{strings.Repeat("9", 40)},
	})
	if err != nil {
		return "", fmt.Errorf("creating the OIDC provider: %w", err)
	}
	return aws.ToString(out.OpenIDConnectProviderArn), nil
}
