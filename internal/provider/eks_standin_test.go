package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
)

// eksPodIdentityStandIn is a STAND-IN, not an emulator of record: the AWS
// emulator of the test bed does not serve EKS Pod Identity associations, so
// this in-test HTTP server implements the seven operations the resource uses
// (Create, Describe, Update, Delete, List, TagResource, UntagResource), with
// the REST-JSON paths, bodies
// and error headers the EKS API documents. It looks roles up in the test
// bed's real IAM (the emulator) and, like IAM propagation, rejects the first
// attempts to use a role it has not seen before. When
// FLINKSTATE_TEST_EKS_CLUSTER is set, tests use the real EKS API instead.
type eksPodIdentityStandIn struct {
	t        *testing.T
	clusters map[string]bool
	// propagationRejections is how many times a newly seen role is refused
	// with "does not exist" before it is accepted.
	propagationRejections int

	mu       sync.Mutex
	assocs   map[string]map[string]any // association ID -> association
	seen     map[string]int            // role ARN -> attempts
	rejected int                       // propagation rejections answered
	nextID   int
}

func newEKSStandIn(t *testing.T, clusters ...string) (*eksPodIdentityStandIn, *httptest.Server) {
	s := &eksPodIdentityStandIn{t: t, clusters: map[string]bool{}, propagationRejections: 2,
		assocs: map[string]map[string]any{}, seen: map[string]int{}}
	for _, c := range clusters {
		s.clusters[c] = true
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv
}

// RoleFor is the role associated with a ServiceAccount of cluster, "" for
// none: what the EKS Pod Identity webhook and agent look up
// (testbed.NodeOptions.PodIdentity).
func (s *eksPodIdentityStandIn) RoleFor(cluster, ns, sa string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.assocs {
		if a["clusterName"] == cluster && a["namespace"] == ns && a["serviceAccount"] == sa {
			role, _ := a["roleArn"].(string)
			return role
		}
	}
	return ""
}

func (s *eksPodIdentityStandIn) Rejected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rejected
}

func eksError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", typ)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

func eksJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (s *eksPodIdentityStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if arn, ok := strings.CutPrefix(r.URL.Path, "/tags/"); ok {
		s.tags(w, r, arn)
		return
	}
	// /clusters/{cluster}/pod-identity-associations[/{id}]
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) < 3 || parts[0] != "clusters" || parts[2] != "pod-identity-associations" || len(parts) > 4 {
		eksError(w, http.StatusNotFound, "ResourceNotFoundException", "no such operation in the stand-in: "+r.Method+" "+r.URL.Path)
		return
	}
	cluster := parts[1]
	if !s.clusters[cluster] {
		eksError(w, http.StatusNotFound, "ResourceNotFoundException", "No cluster found for name: "+cluster+".")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var body map[string]any
	if r.Body != nil && (r.Method == http.MethodPost) {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			eksError(w, http.StatusBadRequest, "InvalidRequestException", "malformed JSON body: "+err.Error())
			return
		}
	}
	if len(parts) == 3 {
		switch r.Method {
		case http.MethodPost:
			s.create(w, cluster, body)
		case http.MethodGet:
			s.list(w, r, cluster)
		default:
			eksError(w, http.StatusMethodNotAllowed, "InvalidRequestException", r.Method+" not allowed")
		}
		return
	}
	a, ok := s.assocs[parts[3]]
	if !ok || a["clusterName"] != cluster {
		eksError(w, http.StatusNotFound, "ResourceNotFoundException", "No Pod Identity Association found for ID "+parts[3]+".")
		return
	}
	switch r.Method {
	case http.MethodGet:
		eksJSON(w, map[string]any{"association": a})
	case http.MethodPost:
		role, _ := body["roleArn"].(string)
		if msg := s.checkRole(role); msg != "" {
			eksError(w, http.StatusBadRequest, "InvalidParameterException", msg)
			return
		}
		a["roleArn"] = role
		a["modifiedAt"] = float64(time.Now().Unix())
		eksJSON(w, map[string]any{"association": a})
	case http.MethodDelete:
		delete(s.assocs, parts[3])
		eksJSON(w, map[string]any{"association": a})
	default:
		eksError(w, http.StatusMethodNotAllowed, "InvalidRequestException", r.Method+" not allowed")
	}
}

// checkRole answers like EKS for a role that does not exist in IAM, or not
// yet as far as EKS can tell. Called with s.mu held.
func (s *eksPodIdentityStandIn) checkRole(roleARN string) string {
	i := strings.Index(roleARN, ":role/")
	if i < 0 {
		return "Role ARN " + roleARN + " is not valid."
	}
	name := roleARN[i+len(":role/"):]
	if _, err := testAWS(s.t).IAM.GetRole(context.Background(), &iam.GetRoleInput{RoleName: aws.String(name)}); err != nil {
		return "Role " + roleARN + " does not exist."
	}
	s.seen[roleARN]++
	if s.seen[roleARN] <= s.propagationRejections {
		s.rejected++
		return "Role " + roleARN + " does not exist." // as during IAM propagation
	}
	return ""
}

func (s *eksPodIdentityStandIn) create(w http.ResponseWriter, cluster string, body map[string]any) {
	ns, _ := body["namespace"].(string)
	sa, _ := body["serviceAccount"].(string)
	role, _ := body["roleArn"].(string)
	if ns == "" || sa == "" || role == "" {
		eksError(w, http.StatusBadRequest, "InvalidParameterException", "namespace, serviceAccount and roleArn are required")
		return
	}
	for _, a := range s.assocs {
		if a["clusterName"] == cluster && a["namespace"] == ns && a["serviceAccount"] == sa {
			eksError(w, http.StatusConflict, "ResourceInUseException", "Association already exists: "+a["associationId"].(string))
			return
		}
	}
	if msg := s.checkRole(role); msg != "" {
		eksError(w, http.StatusBadRequest, "InvalidParameterException", msg)
		return
	}
	s.nextID++
	id := fmt.Sprintf("a-%017d", s.nextID)
	now := float64(time.Now().Unix())
	a := map[string]any{
		"clusterName": cluster, "namespace": ns, "serviceAccount": sa, "roleArn": role,
		"associationId": id, "associationArn": "arn:aws:eks:us-east-1:000000000000:podidentityassociation/" + cluster + "/" + id,
		"createdAt": now, "modifiedAt": now, "disableSessionTags": false,
	}
	if tags, ok := body["tags"].(map[string]any); ok && len(tags) > 0 {
		a["tags"] = tags
	}
	s.assocs[id] = a
	eksJSON(w, map[string]any{"association": a})
}

func (s *eksPodIdentityStandIn) list(w http.ResponseWriter, r *http.Request, cluster string) {
	var out []map[string]any
	for _, a := range s.assocs {
		if a["clusterName"] != cluster {
			continue
		}
		if ns := r.URL.Query().Get("namespace"); ns != "" && a["namespace"] != ns {
			continue
		}
		if sa := r.URL.Query().Get("serviceAccount"); sa != "" && a["serviceAccount"] != sa {
			continue
		}
		out = append(out, map[string]any{"clusterName": cluster, "namespace": a["namespace"], "serviceAccount": a["serviceAccount"],
			"associationId": a["associationId"], "associationArn": a["associationArn"]})
	}
	eksJSON(w, map[string]any{"associations": out})
}

// tags serves TagResource (POST /tags/{resourceArn}, body {"tags": {...}})
// and UntagResource (DELETE /tags/{resourceArn}?tagKeys=...), EKS API
// Reference, on associations.
func (s *eksPodIdentityStandIn) tags(w http.ResponseWriter, r *http.Request, arn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var a map[string]any
	for _, x := range s.assocs {
		if x["associationArn"] == arn {
			a = x
		}
	}
	if a == nil {
		eksError(w, http.StatusNotFound, "NotFoundException", "No resource found for ARN "+arn+".")
		return
	}
	tags, _ := a["tags"].(map[string]any)
	if tags == nil {
		tags = map[string]any{}
	}
	switch r.Method {
	case http.MethodPost:
		var body struct {
			Tags map[string]any `json:"tags"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			eksError(w, http.StatusBadRequest, "BadRequestException", "malformed JSON body: "+err.Error())
			return
		}
		for k, v := range body.Tags {
			tags[k] = v
		}
	case http.MethodDelete:
		for _, k := range r.URL.Query()["tagKeys"] {
			delete(tags, k)
		}
	default:
		eksError(w, http.StatusMethodNotAllowed, "BadRequestException", r.Method+" not allowed")
		return
	}
	if len(tags) == 0 {
		delete(a, "tags")
	} else {
		a["tags"] = tags
	}
	eksJSON(w, map[string]any{})
}
