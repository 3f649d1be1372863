package provider

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// assume_role_with_web_identity: the provider reads the token file, calls
// sts:AssumeRoleWithWebIdentity with it, and signs the S3 calls with the
// credentials STS returned (not with the ones in the environment). A
// recording proxy in front of the emulator sees both.
func TestAccProviderAWS_assumeRoleWithWebIdentity(t *testing.T) {
	needAWSEndpoint(t)
	t.Parallel()
	roleARN := roleToAssume(t, "fs-web-identity-",
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Federated":"arn:aws:iam::000000000000:oidc-provider/oidc.example"},"Action":"sts:AssumeRoleWithWebIdentity"}]}`)
	token := randName("oidc-token-")
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := newRecordingProxy(t)
	bucket := randName("fs-wi-")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             bucketGone(t, bucket),
		Steps: []resource.TestStep{{
			Config: bucketWithAWS(fmt.Sprintf(`
    endpoint = %q
    assume_role_with_web_identity {
      role_arn                = %q
      web_identity_token_file = %q
      session_name            = "flinkstate-acc-wi"
    }`, rec.URL, roleARN, tokenFile), bucket),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("flinkstate_bucket.state", "id", bucket),
				bucketExists(t, bucket),
				func(*terraform.State) error { return rec.checkWebIdentity(roleARN, token, bucket) },
			),
		}},
	})
}

// A token file that cannot be read stops the provider before any change,
// naming the block and the file.
func TestAccProviderAWS_webIdentityTokenFileMissing(t *testing.T) {
	endpoint := needAWSEndpoint(t)
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "no-such-token")
	bucket := randName("fs-wi-missing-")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             bucketGone(t, bucket),
		Steps: []resource.TestStep{{
			Config: bucketWithAWS(fmt.Sprintf(`
    endpoint = %q
    assume_role_with_web_identity {
      role_arn                = "arn:aws:iam::000000000000:role/fs-none"
      web_identity_token_file = %q
    }`, endpoint, missing), bucket),
			ExpectError: regexp.MustCompile(`(?s)aws\.assume_role_with_web_identity.*assuming role.*no-such-token`),
		}},
	})
}

// recordingProxy passes every request to the test bed's AWS endpoint and
// keeps, per request, the STS action or the HTTP method and path, the
// access key the request was signed with, and the credentials any
// AssumeRoleWithWebIdentity answer carried.
type recordingProxy struct {
	URL string

	mu       sync.Mutex
	requests []recorded
	assumed  []string // access key IDs returned by sts:AssumeRoleWithWebIdentity
}

type recorded struct {
	action    string     // STS Action, else "METHOD /path"
	form      url.Values // STS parameters
	accessKey string     // from the SigV4 Authorization header; "" when unsigned
}

var sigV4CredentialRE = regexp.MustCompile(`Credential=([^/]+)/`)

func newRecordingProxy(t *testing.T) *recordingProxy {
	t.Helper()
	target, err := url.Parse(os.Getenv("AWS_ENDPOINT_URL"))
	if err != nil || target.Host == "" {
		t.Fatalf("recording proxy: AWS_ENDPOINT_URL %q is not a URL", os.Getenv("AWS_ENDPOINT_URL"))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{URL: "http://" + ln.Addr().String()}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Header.Get("X-Recorded-Action") != "AssumeRoleWithWebIdentity" {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		var out struct {
			AccessKeyID string `xml:"AssumeRoleWithWebIdentityResult>Credentials>AccessKeyId"`
		}
		if xml.Unmarshal(body, &out) == nil && out.AccessKeyID != "" {
			p.mu.Lock()
			p.assumed = append(p.assumed, out.AccessKeyID)
			p.mu.Unlock()
		}
		return nil
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := recorded{action: r.Method + " " + r.URL.Path}
		if m := sigV4CredentialRE.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
			rec.accessKey = m[1]
		}
		if r.Method == http.MethodPost && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if form, err := url.ParseQuery(string(body)); err == nil && form.Get("Action") != "" {
				rec.action, rec.form = form.Get("Action"), form
				r.Header.Set("X-Recorded-Action", rec.action)
			}
		}
		p.mu.Lock()
		p.requests = append(p.requests, rec)
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p
}

// checkWebIdentity: sts:AssumeRoleWithWebIdentity was called with the role,
// the session name and the token from the file, and the bucket was created
// with a request signed by the credentials it returned.
func (p *recordingProxy) checkWebIdentity(roleARN, token, bucket string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var seen []string
	called := false
	for _, r := range p.requests {
		seen = append(seen, r.action)
		if r.action == "AssumeRoleWithWebIdentity" {
			if got := r.form.Get("RoleArn"); got != roleARN {
				return fmt.Errorf("AssumeRoleWithWebIdentity for role %q, want %q", got, roleARN)
			}
			if got := r.form.Get("WebIdentityToken"); got != token {
				return fmt.Errorf("AssumeRoleWithWebIdentity sent a token that is not the file's (%d bytes)", len(got))
			}
			if got := r.form.Get("RoleSessionName"); got != "flinkstate-acc-wi" {
				return fmt.Errorf("AssumeRoleWithWebIdentity with session name %q, want flinkstate-acc-wi", got)
			}
			called = true
		}
	}
	if !called || len(p.assumed) == 0 {
		return fmt.Errorf("no sts:AssumeRoleWithWebIdentity answered with credentials; requests: %s", strings.Join(seen, ", "))
	}
	for _, r := range p.requests {
		if r.action != "PUT /"+bucket {
			continue
		}
		for _, key := range p.assumed {
			if r.accessKey == key {
				return nil
			}
		}
		return fmt.Errorf("the bucket was created with access key %q, not with the assumed role's (%s)", r.accessKey, strings.Join(p.assumed, ", "))
	}
	return fmt.Errorf("no CreateBucket (PUT /%s) went through the endpoint; requests: %s", bucket, strings.Join(seen, ", "))
}
