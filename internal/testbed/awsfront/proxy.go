package awsfront

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
)

// The test bed's AWS front: every client (terraform, the tests, real Flink)
// reaches the emulator through it. It forwards each request unchanged and
// records every S3 request in a log of one JSON object per line
// (FLINKSTATE_S3_REQUEST_LOG), so tests can judge what real Flink asked of
// S3 against the role's policy. It also answers, over TLS, for the STS host
// names AWS SDK for Java v1 cannot be pointed away from: the S3 plugin's
// WebIdentityTokenCredentialsProvider builds its STS client with
// AWSSecurityTokenServiceClientBuilder.standard() and no endpoint
// (STSAssumeRoleWithWebIdentitySessionCredentialsProvider.buildStsClient),
// so the Flink JVMs resolve sts.amazonaws.com and the regional names to this
// listener through a JVM hosts file and trust the test bed's CA. The
// credentials the emulator's STS issues are remembered with their role, so
// the log names the role behind each S3 request.

// S3Request is one line of the S3 request log.
type S3Request struct {
	Time   string `json:"time"`
	Method string `json:"method"`
	Bucket string `json:"bucket,omitempty"`
	Key    string `json:"key,omitempty"`
	Prefix string `json:"prefix,omitempty"` // a listing's prefix= query
	Query  string `json:"query,omitempty"`
	// Keys are the keys a DeleteObjects request (POST ?delete) names.
	Keys      []string `json:"keys,omitempty"`
	AccessKey string   `json:"access_key"`
	// RoleARN is the role whose STS credentials signed the request, when
	// the test bed's STS issued them ("" for the test bed's static keys).
	RoleARN string `json:"role_arn,omitempty"`
	Status  int    `json:"status"`
	// Bytes is the body's length: the request's for a PUT or POST, the
	// response's otherwise.
	Bytes int64 `json:"bytes"`
	// App is the application the AWS SDK for Go v2 names in its User-Agent
	// ("app/<id>", config.WithAppID): the provider's is
	// terraform-provider-flinkstate/<version>; "" for other clients.
	App string `json:"app,omitempty"`
}

// userAgentApp is the app/<id> token of an AWS SDK User-Agent, or "".
func userAgentApp(ua string) string {
	for _, f := range strings.Fields(ua) {
		if id, ok := strings.CutPrefix(f, "app/"); ok {
			return id
		}
	}
	return ""
}

// AWSProxyConfig configures ServeAWSProxy.
type AWSProxyConfig struct {
	Listen   string // host:port of the plain-HTTP front (the test bed's AWS endpoint)
	Target   string // the emulator's URL
	Log      string // the S3 request log
	STS      string // host:port of the TLS listener for the STS host names ("" for none)
	CertFile string // its certificate (for the STS names) and key
	KeyFile  string
	// DirMarkers turns on the translation of keys ending in "/"
	// (s3markers.go), which kumo needs and LocalStack does not: its
	// router keeps the URL path as sent (localstack/aws/protocol/op_router.py:
	// merge_slashes=False, and GreedyPathConverter for the <path:Key>
	// variable), so it stores "a/b/" and "a/b" as two objects, as S3 does.
	DirMarkers bool
	// DataFile keeps what the front itself serves across its restarts:
	// bucket regions and replication configurations (s3replication.go).
	DataFile string
	// Region is the test bed's region: the SigV4 scope of the front's own
	// requests to the emulator.
	Region string
}

// credentialScope reads the access key, region and service of a SigV4 request
// (Authorization: AWS4-HMAC-SHA256 Credential=AKID/date/region/service/aws4_request,
// or the X-Amz-Credential query parameter of a presigned URL).
var credentialScope = regexp.MustCompile(`Credential=([^/,\s]+)/[^/]+/([^/]+)/([^/]+)/aws4_request`)

func sigV4(r *http.Request) (accessKey, region, service string) {
	if m := credentialScope.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
		return m[1], m[2], m[3]
	}
	if c := r.URL.Query().Get("X-Amz-Credential"); c != "" {
		parts := strings.Split(c, "/")
		if len(parts) == 5 {
			return parts[0], parts[2], parts[3]
		}
	}
	return "", "", ""
}

type awsProxy struct {
	target *url.URL
	rp     *httputil.ReverseProxy
	mu     sync.Mutex
	log    *os.File
	roles  map[string]string // access key -> role ARN, from STS responses
	// dirMarkers: translate keys ending in "/" (AWSProxyConfig.DirMarkers)
	dirMarkers bool
	// repl keeps bucket regions and emulates S3 replication (s3replication.go).
	repl *replicator
	// gone: keys whose current version is a delete marker, for kumo
	// (s3deletemarkers.go).
	gone deleteMarkers
}

// ServeAWSProxy runs the AWS front until ctx ends.
func ServeAWSProxy(ctx context.Context, cfg AWSProxyConfig) error {
	target, err := url.Parse(cfg.Target)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(cfg.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	repl, err := newReplicator(target, cfg.DataFile, region)
	if err != nil {
		return err
	}
	stopRepl := make(chan struct{})
	defer close(stopRepl)
	go repl.run(stopRepl)
	p := &awsProxy{target: target, log: f, roles: map[string]string{}, dirMarkers: cfg.DirMarkers, repl: repl}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = target.Host
		},
		ModifyResponse: func(resp *http.Response) error {
			if isS3, _ := resp.Request.Context().Value(s3Key{}).(bool); isS3 {
				if cfg.DirMarkers {
					if err := rewriteMarkerResponse(resp); err != nil {
						return err
					}
				}
				// What the front does once the emulator answered runs
				// before the client has the answer: a write is queued
				// for replication before its writer can ask whether
				// replication is idle.
				if after, _ := resp.Request.Context().Value(afterKey{}).(func(*http.Response)); after != nil {
					after(resp)
				}
				return nil
			}
			return p.learnSTS(resp)
		},
	}
	servers := []*http.Server{}
	// The STS listener binds first: a front that cannot have its port 443
	// exits before its health endpoint ever answers (startAWSProxy then
	// tries another address).
	var tln net.Listener
	if cfg.STS != "" {
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return err
		}
		if tln, err = tls.Listen("tcp", cfg.STS, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}); err != nil {
			return fmt.Errorf("STS listener: %w", err)
		}
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		if tln != nil {
			tln.Close()
		}
		return err
	}
	plain := &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	servers = append(servers, plain)
	errc := make(chan error, 2)
	go func() { errc <- plain.Serve(ln) }()
	if tln != nil {
		secure := &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
		servers = append(servers, secure)
		go func() { errc <- secure.Serve(tln) }()
	}
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	for _, s := range servers {
		_ = s.Close()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

type statusWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.n += int64(n)
	return n, err
}

func (p *awsProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == ReplicationControlPath {
		p.repl.serveControl(w, r)
		return
	}
	ak, signedRegion, service := sigV4(r)
	if service != "s3" && r.Method == http.MethodPost &&
		strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		// STS's query protocol: the action and role are form fields.
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if form, err := url.ParseQuery(string(body)); err == nil &&
			strings.HasPrefix(form.Get("Action"), "AssumeRole") && form.Get("RoleArn") != "" {
			r = r.WithContext(context.WithValue(r.Context(), roleKey{}, form.Get("RoleArn")))
		}
	}
	var deleted []string
	if service == "s3" && r.Method == http.MethodPost && r.URL.Query().Has("delete") {
		// DeleteObjects names its keys in the body; each is authorized
		// as s3:DeleteObject on that key.
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var del struct {
			Objects []struct {
				Key string `xml:"Key"`
			} `xml:"Object"`
		}
		if xml.Unmarshal(body, &del) == nil {
			for _, o := range del.Objects {
				deleted = append(deleted, o.Key)
			}
		}
	}
	var logged url.URL
	if service == "s3" {
		// The log keeps the key as the client sent it.
		logged = *r.URL
		if p.dirMarkers {
			if err := rewriteMarkerRequest(r); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		r = r.WithContext(context.WithValue(r.Context(), s3Key{}, true))
	}
	sw := &statusWriter{ResponseWriter: w}
	handled := false
	if service == "s3" {
		var after func(*http.Response)
		handled, after = p.s3Front(sw, r, logged, signedRegion)
		if after != nil {
			r = r.WithContext(context.WithValue(r.Context(), afterKey{}, after))
		}
	}
	if !handled {
		p.rp.ServeHTTP(sw, r)
	}
	if service != "s3" {
		return
	}
	r.URL = &logged
	// Path-style requests only (the test bed's clients all use it):
	// /bucket/key.
	path := strings.TrimPrefix(r.URL.Path, "/")
	bucket, key, _ := strings.Cut(path, "/")
	q := r.URL.Query()
	entry := S3Request{
		Time:      time.Now().UTC().Format(time.RFC3339Nano),
		Method:    r.Method,
		Bucket:    bucket,
		Key:       key,
		Prefix:    q.Get("prefix"),
		Query:     r.URL.RawQuery,
		Keys:      deleted,
		AccessKey: ak,
		Status:    sw.status,
		Bytes:     sw.n,
		App:       userAgentApp(r.UserAgent()),
	}
	if r.Method == http.MethodPut || r.Method == http.MethodPost {
		entry.Bytes = r.ContentLength
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	entry.RoleARN = p.roles[ak]
	b, _ := json.Marshal(entry)
	_, _ = p.log.Write(append(b, '\n'))
}

// assumeRoleWithWebIdentity is the part of STS's
// AssumeRoleWithWebIdentityResponse (and AssumeRoleResponse) the proxy reads.
type assumeRoleResponse struct {
	Result struct {
		Credentials struct {
			AccessKeyID string `xml:"AccessKeyId"`
		} `xml:"Credentials"`
	} `xml:",any"`
}

type roleKey struct{}

// s3Key marks a request the front took for S3 (SigV4 scope s3).
type s3Key struct{}

// afterKey carries what the front does with the emulator's answer to an
// S3 request (s3Front).
type afterKey struct{}

// learnSTS remembers which role the credentials of an STS AssumeRole* answer
// belong to (the role ARN is the request's RoleArn parameter).
func (p *awsProxy) learnSTS(resp *http.Response) error {
	if resp.Request == nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	role, _ := resp.Request.Context().Value(roleKey{}).(string)
	if role == "" {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return err
	}
	var out assumeRoleResponse
	if xml.Unmarshal(body, &out) == nil && out.Result.Credentials.AccessKeyID != "" {
		p.mu.Lock()
		p.roles[out.Result.Credentials.AccessKeyID] = role
		p.mu.Unlock()
	}
	return nil
}

// ReadS3Requests reads an S3 request log.
func ReadS3Requests(path string) ([]S3Request, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []S3Request
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var r S3Request
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// HostNames are the AWS host names the TLS listener answers for. STS:
// the names AWS SDK for Java v1 resolves STS to in the test bed's region,
// the global endpoint (its default for us-east-1) and the regional one
// (with AWS_STS_REGIONAL_ENDPOINTS=regional, which EKS's pod identity
// webhook sets). S3: its regional endpoint, which real Flink is pointed at
// (S3 over TLS, as on AWS: over plain HTTP SDK v1 signs uploads in
// aws-chunked encoding (AWSS3V4Signer, payload signing is forced off
// https), which the emulator stores undecoded; over https it sends
// UNSIGNED-PAYLOAD).
//
// It answers for the test bed's second region too (SecondRegion), so a
// Flink job "in region B" reaches a bucket there under that region's names.
func HostNames(region string) []string {
	names := []string{"sts.amazonaws.com"}
	for _, r := range testbedRegions(region) {
		names = append(names, "sts."+r+".amazonaws.com", "s3."+r+".amazonaws.com")
	}
	return names
}

// s3Front is what the front does itself for an S3 request (logged is its
// URL as the client sent it): it answers bucket regions and replication
// configurations (handled), refuses a request signed for another region
// than its bucket's, and returns what to do once the emulator answered
// (record a new bucket's region, queue a write for replication).
func (p *awsProxy) s3Front(sw *statusWriter, r *http.Request, logged url.URL, signedRegion string) (handled bool, after func(*http.Response)) {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(logged.Path, "/"), "/")
	if bucket == "" {
		return false, nil
	}
	q := logged.Query()
	sub := false // a sub-resource or an operation other than the plain one
	for k := range q {
		if k != "x-id" {
			sub = true
		}
	}
	ok2xx := func(resp *http.Response) bool { return resp.StatusCode/100 == 2 }
	if key == "" && r.Method == http.MethodPut && !sub {
		// CreateBucket: S3 refuses a LocationConstraint other than the
		// region the request was sent to (Amazon S3 API Reference,
		// "Error responses": IllegalLocationConstraintException).
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(sw, err.Error(), http.StatusBadRequest)
			return true, nil
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		want, err := createBucketRegion(body)
		if err != nil {
			writeS3Error(sw, http.StatusBadRequest, "MalformedXML", "The XML you provided was not well-formed", "/"+bucket)
			return true, nil
		}
		if signedRegion != "" && want != signedRegion {
			writeS3Error(sw, http.StatusBadRequest, "IllegalLocationConstraintException",
				fmt.Sprintf("The %s location constraint is incompatible for the region specific endpoint this request was sent to (%s).", want, signedRegion), "/"+bucket)
			return true, nil
		}
		return false, func(resp *http.Response) {
			if ok2xx(resp) {
				p.repl.setBucketRegion(bucket, want)
			}
		}
	}
	region, known := p.repl.bucketRegion(bucket)
	if key == "" && r.Method == http.MethodGet && q.Has("location") {
		// GetBucketLocation may be sent to any region.
		if !known {
			return false, nil
		}
		sw.Header().Set("Content-Type", "application/xml")
		_, _ = sw.Write(locationConstraintBody(region))
		return true, nil
	}
	if known && signedRegion != "" && signedRegion != region {
		wrongRegion(sw, bucket, signedRegion, region)
		return true, nil
	}
	if known {
		sw.Header().Set("x-amz-bucket-region", region)
	}
	if key == "" && q.Has("replication") {
		p.repl.serveReplicationConfig(sw, r, bucket)
		return true, nil
	}
	emuKey := key
	if p.dirMarkers {
		emuKey = toEmulatorKey(key)
	}
	switch {
	case key == "" && r.Method == http.MethodDelete && !sub:
		return false, func(resp *http.Response) {
			if ok2xx(resp) {
				p.repl.bucketDeleted(bucket)
				p.gone.bucketDeleted(bucket)
			}
		}
	case key != "" && r.Method == http.MethodPut && !sub:
		// PutObject and CopyObject (UploadPart carries partNumber).
		return false, func(resp *http.Response) {
			if ok2xx(resp) {
				p.gone.set(p.dirMarkers, bucket, key, false)
				p.repl.written(bucket, key, emuKey, resp.Header.Get("x-amz-version-id"), false)
			}
		}
	case key != "" && r.Method == http.MethodPost && q.Has("uploadId"):
		// CompleteMultipartUpload.
		return false, func(resp *http.Response) {
			if ok2xx(resp) {
				p.gone.set(p.dirMarkers, bucket, key, false)
				p.repl.written(bucket, key, emuKey, resp.Header.Get("x-amz-version-id"), false)
			}
		}
	case key != "" && r.Method == http.MethodDelete && !sub:
		// A DELETE without versionId adds a delete marker in a versioned
		// bucket (S3 User Guide, "Working with delete markers"); one with
		// versionId deletes that version, which is never replicated.
		return false, func(resp *http.Response) {
			if ok2xx(resp) && resp.Header.Get("x-amz-delete-marker") == "true" {
				p.gone.set(p.dirMarkers, bucket, key, true)
				p.repl.written(bucket, key, emuKey, resp.Header.Get("x-amz-version-id"), true)
			}
		}
	case key != "" && r.Method == http.MethodDelete && q.Has("versionId"):
		// Deleting the delete marker itself makes the object current again.
		return false, func(resp *http.Response) {
			if ok2xx(resp) && resp.Header.Get("x-amz-delete-marker") == "true" {
				p.gone.set(p.dirMarkers, bucket, key, false)
			}
		}
	case key != "" && (r.Method == http.MethodHead || r.Method == http.MethodGet) && !sub && p.gone.has(bucket, key):
		// S3 API Reference, HeadObject and GetObject: "If the current
		// version of the object is a delete marker, Amazon S3 behaves as
		// if the object was deleted and includes x-amz-delete-marker:
		// true in the response."
		sw.Header().Set("x-amz-delete-marker", "true")
		if r.Method == http.MethodHead {
			sw.WriteHeader(http.StatusNotFound)
		} else {
			writeS3Error(sw, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.", "/"+bucket+"/"+key)
		}
		return true, nil
	case key == "" && r.Method == http.MethodGet && isVersionsListing(q) && p.dirMarkers:
		// kumo does not page ListObjectVersions (s3versions.go).
		pg := takeVersionsPaging(r)
		return false, func(resp *http.Response) {
			if ok2xx(resp) {
				_ = pg.page(resp)
			}
		}
	case key == "" && r.Method == http.MethodGet && isListing(q):
		return false, func(resp *http.Response) {
			if ok2xx(resp) {
				_ = p.gone.filterListing(bucket, resp, func(prefix string) bool { return p.liveUnder(bucket, prefix) })
			}
		}
	case key == "" && r.Method == http.MethodPost && q.Has("delete"):
		// DeleteObjects: each key named without a version gets a delete
		// marker in a versioned bucket, whether it existed or not (S3 User
		// Guide, "Working with delete markers"). S3A asks in quiet mode
		// (no Deleted entries in the answer), so the keys are read from
		// the request, less those the answer names as errors.
		objects := deleteRequestObjects(r)
		return false, func(resp *http.Response) {
			if !ok2xx(resp) {
				return
			}
			body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
			_ = resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
			if err != nil {
				return
			}
			var res struct {
				Deleted []struct {
					Key          string `xml:"Key"`
					DeleteMarker bool   `xml:"DeleteMarker"`
				} `xml:"Deleted"`
				Errors []struct {
					Key string `xml:"Key"`
				} `xml:"Error"`
			}
			if xml.Unmarshal(body, &res) != nil {
				return
			}
			failed, marker := map[string]bool{}, map[string]bool{}
			for _, e := range res.Errors {
				failed[e.Key] = true
			}
			for _, d := range res.Deleted {
				marker[d.Key] = d.DeleteMarker
			}
			for _, o := range objects {
				dm, answered := marker[o.Key]
				switch {
				case failed[o.Key]:
				case o.Versioned:
					// A version deleted; when it was the delete marker,
					// the object is current again. Never replicated.
					if dm {
						p.gone.set(p.dirMarkers, bucket, o.Key, false)
					}
				case answered && !dm:
					// Deleted outright: the bucket is not versioned.
				default:
					p.gone.set(p.dirMarkers, bucket, o.Key, true)
					ek := o.Key
					if p.dirMarkers {
						ek = toEmulatorKey(ek)
					}
					p.repl.written(bucket, o.Key, ek, "", true)
				}
			}
		}
	}
	return false, nil
}
