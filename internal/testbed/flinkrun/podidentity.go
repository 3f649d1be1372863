package flinkrun

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// PodIdentityAgent stands in for the EKS Pod Identity Agent, which cannot
// run here: a local HTTP endpoint that answers the container credentials
// request of an AWS SDK (GET with the pod's token in the Authorization
// header) with the associated role's credentials, in the container
// credentials format (AccessKeyId, SecretAccessKey, Token, Expiration;
// EKS User Guide, "Understand how EKS Pod Identity works"). The real agent
// gets them from the EKS Auth API (AssumeRoleForPodIdentity); the stand-in
// asks the emulator's STS for AssumeRole of the role, through the test bed's
// AWS front, so the request log names the role behind the credentials.
type PodIdentityAgent struct {
	URL   string // the credentials endpoint (AWS_CONTAINER_CREDENTIALS_FULL_URI)
	srv   *http.Server
	token string
}

// StartPodIdentityAgent serves roleARN's credentials to requests carrying
// the token PodEnv writes, until ctx ends or Close is called.
func StartPodIdentityAgent(ctx context.Context, tb Bed, roleARN string) (*PodIdentityAgent, error) {
	ac, err := newBedAWS(ctx, tb)
	if err != nil {
		return nil, err
	}
	client := ac.STS
	a := &PodIdentityAgent{token: randomHex(24)}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/credentials", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != a.token {
			http.Error(w, `{"message":"invalid token"}`, http.StatusForbidden)
			return
		}
		out, err := client.AssumeRole(r.Context(), &sts.AssumeRoleInput{RoleArn: aws.String(roleARN), RoleSessionName: aws.String("eks-pod-identity")})
		if err != nil {
			http.Error(w, fmt.Sprintf(`{"message":%q}`, err.Error()), http.StatusInternalServerError)
			return
		}
		c := out.Credentials
		_ = json.NewEncoder(w).Encode(map[string]string{
			"AccessKeyId": aws.ToString(c.AccessKeyId), "SecretAccessKey": aws.ToString(c.SecretAccessKey),
			"Token": aws.ToString(c.SessionToken), "Expiration": aws.ToTime(c.Expiration).UTC().Format(time.RFC3339),
		})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	a.URL = "http://" + ln.Addr().String() + "/v1/credentials"
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = a.srv.Serve(ln) }()
	go func() { <-ctx.Done(); a.Close() }()
	return a, nil
}

// Close stops the agent.
func (a *PodIdentityAgent) Close() { _ = a.srv.Close() }

// PodEnv is what the EKS Pod Identity webhook injects into a pod whose
// ServiceAccount has an association (EKS User Guide, "Understand how EKS
// Pod Identity works": AWS_CONTAINER_CREDENTIALS_FULL_URI and
// AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE), with the token file written in
// dir. The agent listens on loopback, where the real one listens on
// 169.254.170.23: AWS SDK for Java v1 accepts a loopback FULL_URI too
// (ContainerCredentialsProvider.FullUriCredentialsEndpointProvider).
func (a *PodIdentityAgent) PodEnv(dir string, tb Bed) ([]string, error) {
	token := filepath.Join(dir, "eks-pod-identity-token")
	if err := os.WriteFile(token, []byte(a.token), 0o600); err != nil {
		return nil, err
	}
	return []string{"AWS_CONTAINER_CREDENTIALS_FULL_URI=" + a.URL, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE=" + token,
		"AWS_REGION=" + tb.AWSRegion, "AWS_DEFAULT_REGION=" + tb.AWSRegion}, nil
}
