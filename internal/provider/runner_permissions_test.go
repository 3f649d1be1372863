package provider

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// The runner's permissions (docs/guides/runner-permissions.md) are files
// under examples/runner-permissions that the guide embeds and these tests
// read, so the two cannot diverge.
const runnerPermissionsDir = "../../examples/runner-permissions"

// awsOperationActions maps each AWS SDK operation the provider calls
// ("<sdk package>.<operation>") to the IAM actions that authorize it, from
// the Service Authorization Reference ("Actions, resources, and condition
// keys for Amazon S3 / IAM / Amazon EKS / AWS STS") and each operation's
// "Permissions" section in the service's API Reference. Where the
// operation and the action are named alike the reference says so too; the
// exceptions are the S3 ones: HeadBucket and ListObjectsV2 need
// s3:ListBucket, HeadObject s3:GetObject, ListObjectVersions
// s3:ListBucketVersions, Get/PutBucketEncryption
// s3:Get/PutEncryptionConfiguration, the lifecycle, replication and
// public access block operations s3:Get/PutLifecycleConfiguration,
// s3:Get/PutReplicationConfiguration and s3:Get/PutBucketPublicAccessBlock,
// and their Delete… operations the Put… action (DeleteBucketLifecycle:
// s3:PutLifecycleConfiguration; DeleteBucketReplication:
// s3:PutReplicationConfiguration; DeleteBucketTagging: s3:PutBucketTagging).
// DeleteObjects needs s3:DeleteObject per key, and s3:DeleteObjectVersion
// for the versions force_destroy deletes (s3state.DeleteAll names version
// ids). PutBucketReplication passes the replication role to S3
// (iam:PassRole: Amazon S3 User Guide, "Setting up permissions for live
// replication"), as a Pod Identity association passes its role to EKS
// (Amazon EKS User Guide, "Assign an IAM role to a Kubernetes service
// account"). sts:GetCallerIdentity and sts:AssumeRoleWithWebIdentity need
// no permission of the caller (AWS STS API Reference: "No permissions are
// required to perform this operation"; a web identity is authorized by the
// role's trust policy); sts:AssumeRole with session tags needs
// sts:TagSession.
var awsOperationActions = map[string][]string{
	"s3.CreateBucket":                    {"s3:CreateBucket"},
	"s3.DeleteBucket":                    {"s3:DeleteBucket"},
	"s3.HeadBucket":                      {"s3:ListBucket"},
	"s3.GetBucketLocation":               {"s3:GetBucketLocation"},
	"s3.GetBucketVersioning":             {"s3:GetBucketVersioning"},
	"s3.PutBucketVersioning":             {"s3:PutBucketVersioning"},
	"s3.GetBucketEncryption":             {"s3:GetEncryptionConfiguration"},
	"s3.PutBucketEncryption":             {"s3:PutEncryptionConfiguration"},
	"s3.GetBucketLifecycleConfiguration": {"s3:GetLifecycleConfiguration"},
	"s3.PutBucketLifecycleConfiguration": {"s3:PutLifecycleConfiguration"},
	"s3.DeleteBucketLifecycle":           {"s3:PutLifecycleConfiguration"},
	"s3.GetBucketPolicy":                 {"s3:GetBucketPolicy"},
	"s3.PutBucketPolicy":                 {"s3:PutBucketPolicy"},
	"s3.DeleteBucketPolicy":              {"s3:DeleteBucketPolicy"},
	"s3.GetPublicAccessBlock":            {"s3:GetBucketPublicAccessBlock"},
	"s3.PutPublicAccessBlock":            {"s3:PutBucketPublicAccessBlock"},
	"s3.GetBucketTagging":                {"s3:GetBucketTagging"},
	"s3.PutBucketTagging":                {"s3:PutBucketTagging"},
	"s3.DeleteBucketTagging":             {"s3:PutBucketTagging"},
	"s3.GetBucketReplication":            {"s3:GetReplicationConfiguration"},
	"s3.PutBucketReplication":            {"s3:PutReplicationConfiguration", "iam:PassRole"},
	"s3.DeleteBucketReplication":         {"s3:PutReplicationConfiguration"},
	"s3.ListObjectsV2":                   {"s3:ListBucket"},
	"s3.ListObjectVersions":              {"s3:ListBucketVersions"},
	"s3.GetObject":                       {"s3:GetObject"},
	"s3.HeadObject":                      {"s3:GetObject"},
	"s3.PutObject":                       {"s3:PutObject"},
	"s3.DeleteObject":                    {"s3:DeleteObject"},
	"s3.DeleteObjects":                   {"s3:DeleteObject", "s3:DeleteObjectVersion"},

	"iam.CreateRole":               {"iam:CreateRole"},
	"iam.GetRole":                  {"iam:GetRole"},
	"iam.DeleteRole":               {"iam:DeleteRole"},
	"iam.UpdateRole":               {"iam:UpdateRole"},
	"iam.UpdateAssumeRolePolicy":   {"iam:UpdateAssumeRolePolicy"},
	"iam.TagRole":                  {"iam:TagRole"},
	"iam.UntagRole":                {"iam:UntagRole"},
	"iam.PutRolePolicy":            {"iam:PutRolePolicy"},
	"iam.GetRolePolicy":            {"iam:GetRolePolicy"},
	"iam.DeleteRolePolicy":         {"iam:DeleteRolePolicy"},
	"iam.ListRolePolicies":         {"iam:ListRolePolicies"},
	"iam.ListAttachedRolePolicies": {"iam:ListAttachedRolePolicies"},
	"iam.DetachRolePolicy":         {"iam:DetachRolePolicy"},

	"eks.CreatePodIdentityAssociation":   {"eks:CreatePodIdentityAssociation", "iam:PassRole"},
	"eks.DescribePodIdentityAssociation": {"eks:DescribePodIdentityAssociation"},
	"eks.UpdatePodIdentityAssociation":   {"eks:UpdatePodIdentityAssociation", "iam:PassRole"},
	"eks.DeletePodIdentityAssociation":   {"eks:DeletePodIdentityAssociation"},
	"eks.TagResource":                    {"eks:TagResource"},
	"eks.UntagResource":                  {"eks:UntagResource"},

	"sts.GetCallerIdentity":         nil,
	"sts.AssumeRoleWithWebIdentity": nil,
	"sts.AssumeRole":                {"sts:AssumeRole", "sts:TagSession"},
}

// runnerPolicyFamilies: the documented policy of each resource family and
// the operations its resources and data sources call (read from the code:
// internal/s3state, internal/checkpoint, internal/iamrole and
// internal/podidentity, and which resource calls which of their
// functions). A family's policy must grant exactly what its operations
// need; every operation in the code belongs to a family.
var runnerPolicyFamilies = map[string][]string{
	// flinkstate_bucket: s3state.CreateBucket, ReadHardening (hardening.go),
	// WriteBucketMarker/ReadBucketMarker (bucketowner.go), FindBucket and
	// ProbeBucket (find.go), Contents and DeleteAll with force_destroy
	// (empty.go), checkpoint.NewestInBucket.
	"aws-bucket.json": {"s3.CreateBucket", "s3.DeleteBucket", "s3.HeadBucket", "s3.ListObjectsV2", "s3.ListObjectVersions",
		"s3.GetBucketVersioning", "s3.PutBucketVersioning", "s3.GetBucketEncryption", "s3.PutBucketEncryption",
		"s3.GetBucketLifecycleConfiguration", "s3.PutBucketLifecycleConfiguration", "s3.GetBucketPolicy", "s3.PutBucketPolicy",
		"s3.DeleteBucketPolicy", "s3.GetPublicAccessBlock", "s3.PutPublicAccessBlock", "s3.GetBucketTagging", "s3.PutBucketTagging",
		"s3.DeleteBucketTagging", "s3.GetObject", "s3.PutObject", "s3.DeleteObjects"},
	// flinkstate_bucket_replication: s3state.FindBucket, BucketRegion,
	// VersioningEnabled, FindReplication, PutReplication and
	// DeleteReplication (replication.go); its role through iamrole.Create,
	// PutPolicy, Read and Delete.
	"aws-bucket-replication.json": {"s3.HeadBucket", "s3.GetBucketLocation", "s3.GetBucketVersioning", "s3.GetBucketReplication",
		"s3.PutBucketReplication", "s3.DeleteBucketReplication",
		"iam.CreateRole", "iam.GetRole", "iam.DeleteRole", "iam.PutRolePolicy", "iam.GetRolePolicy", "iam.DeleteRolePolicy"},
	// flinkstate_state_store: its marker (owner.go), the store's lifecycle
	// rules (storelifecycle.go), CheckFree/NestedStores/Contents listings,
	// DeleteAll with force_destroy, checkpoint.InStore.
	"aws-state-store.json": {"s3.HeadBucket", "s3.ListObjectsV2", "s3.ListObjectVersions", "s3.GetObject", "s3.PutObject",
		"s3.DeleteObject", "s3.DeleteObjects", "s3.GetBucketLifecycleConfiguration", "s3.PutBucketLifecycleConfiguration",
		"s3.DeleteBucketLifecycle"},
	// flinkstate_iam_role: every function of internal/iamrole.
	"aws-iam-role.json": {"iam.CreateRole", "iam.GetRole", "iam.DeleteRole", "iam.UpdateRole", "iam.UpdateAssumeRolePolicy",
		"iam.TagRole", "iam.UntagRole", "iam.PutRolePolicy", "iam.GetRolePolicy", "iam.DeleteRolePolicy", "iam.ListRolePolicies",
		"iam.ListAttachedRolePolicies", "iam.DetachRolePolicy"},
	// flinkstate_pod_identity_association: internal/podidentity.
	"aws-pod-identity-association.json": {"eks.CreatePodIdentityAssociation", "eks.DescribePodIdentityAssociation",
		"eks.UpdatePodIdentityAssociation", "eks.DeletePodIdentityAssociation", "eks.TagResource", "eks.UntagResource"},
	// The provider's configuration (awsclient.New): sts:GetCallerIdentity,
	// and the assume_role blocks through the SDK's stscreds.
	"aws-provider-configure.json": {"sts.GetCallerIdentity", "sts.AssumeRole", "sts.AssumeRoleWithWebIdentity"},
	// The data sources (checkpoint.Latest, LatestComplete, LatestRestorable,
	// MetadataTime, Orphans) and flinkstate_deployment's check of what it
	// restores from (checkpoint.CheckRestorable): listings and reads.
	"aws-read-s3.json": {"s3.ListObjectsV2", "s3.HeadObject", "s3.GetObject"},
}

// iamPolicy is the part of an IAM policy document the coverage check reads.
type iamPolicy struct {
	Version   string
	Statement []struct {
		Sid      string
		Effect   string
		Action   stringOrList
		Resource stringOrList
	}
}

type stringOrList []string

func (s *stringOrList) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*s = []string{one}
		return nil
	}
	var many []string
	err := json.Unmarshal(b, &many)
	*s = many
	return err
}

func readRunnerPolicy(t testing.TB, file string) iamPolicy {
	t.Helper()
	p, err := loadRunnerPolicy(file)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func loadRunnerPolicy(file string) (iamPolicy, error) {
	var p iamPolicy
	b, err := os.ReadFile(filepath.Join(runnerPermissionsDir, file))
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	if err != nil {
		return p, fmt.Errorf("%s: %w", file, err)
	}
	return p, nil
}

// allows tells whether the policy has an Allow statement for action. IAM
// action names are case-insensitive and may use * and ? (IAM User Guide,
// "IAM JSON policy elements: Action").
func (p iamPolicy) allows(action string) bool {
	for _, st := range p.Statement {
		if st.Effect != "Allow" {
			continue
		}
		for _, a := range st.Action {
			if ok, _ := filepath.Match(strings.ToLower(a), strings.ToLower(action)); ok {
				return true
			}
		}
	}
	return false
}

func (p iamPolicy) actions() []string {
	var out []string
	for _, st := range p.Statement {
		out = append(out, st.Action...)
	}
	return out
}

// sdkOperationsInCode finds every AWS SDK operation the provider's code can
// call: each reference to an operation's input type (s3.PutObjectInput),
// which every call and paginator of the SDK takes, in the non-test Go files
// of the module outside the test bed.
func sdkOperationsInCode(t *testing.T) map[string][]string {
	t.Helper()
	clients := map[string]reflect.Type{
		"github.com/aws/aws-sdk-go-v2/service/s3":  reflect.TypeOf(&s3.Client{}),
		"github.com/aws/aws-sdk-go-v2/service/iam": reflect.TypeOf(&iam.Client{}),
		"github.com/aws/aws-sdk-go-v2/service/eks": reflect.TypeOf(&eks.Client{}),
		"github.com/aws/aws-sdk-go-v2/service/sts": reflect.TypeOf(&sts.Client{}),
		"github.com/aws/aws-sdk-go-v2/service/kms": reflect.TypeOf(&kms.Client{}),
	}
	found := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testbed", "tools", ".git", ".testbed", "bin", "dist":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		imports := map[string]string{} // local name -> SDK package path
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if _, ok := clients[p]; !ok {
				continue
			}
			name := filepath.Base(p)
			if im.Name != nil {
				name = im.Name.Name
			}
			imports[name] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok || imports[x.Name] == "" || !strings.HasSuffix(sel.Sel.Name, "Input") {
				return true
			}
			pkg := imports[x.Name]
			op := strings.TrimSuffix(sel.Sel.Name, "Input")
			if _, ok := clients[pkg].MethodByName(op); !ok {
				return true
			}
			key := filepath.Base(pkg) + "." + op
			where := fset.Position(sel.Pos()).String()
			found[key] = append(found[key], strings.TrimPrefix(where, "../../"))
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The SDK's stscreds providers call these for the assume_role blocks
	// (awsclient.New), outside this module's code.
	found["sts.AssumeRole"] = append(found["sts.AssumeRole"], "aws.assume_role (stscreds.NewAssumeRoleProvider)")
	found["sts.AssumeRoleWithWebIdentity"] = append(found["sts.AssumeRoleWithWebIdentity"],
		"aws.assume_role_with_web_identity (stscreds.NewWebIdentityRoleProvider)")
	return found
}

// Every AWS operation the code can call is authorized by the documented
// policy of a family, each family's policy grants what its operations
// need and nothing else, and the table names no operation the code no
// longer calls.
func TestRunnerPermissions_awsOperationsInCodeAreDocumented(t *testing.T) {
	inCode := sdkOperationsInCode(t)
	if len(inCode) < 40 {
		t.Fatalf("found only %d SDK operations in the code: the scan is broken", len(inCode))
	}
	inFamily := map[string]bool{}
	for file, ops := range runnerPolicyFamilies {
		p := readRunnerPolicy(t, file)
		need := map[string]bool{}
		for _, op := range ops {
			inFamily[op] = true
			actions, known := awsOperationActions[op]
			if !known {
				t.Errorf("%s: operation %s has no IAM actions in awsOperationActions", file, op)
			}
			for _, a := range actions {
				need[strings.ToLower(a)] = true
				if !p.allows(a) {
					t.Errorf("%s does not allow %s, which %s needs", file, a, op)
				}
			}
		}
		for _, a := range p.actions() {
			if !need[strings.ToLower(a)] {
				t.Errorf("%s allows %s, which no operation of its family needs: remove it (least privilege)", file, a)
			}
		}
	}
	for op, where := range inCode {
		if _, known := awsOperationActions[op]; !known {
			t.Errorf("AWS operation %s (%s) has no IAM action: add it to awsOperationActions, citing the Service Authorization Reference", op, where[0])
		}
		if !inFamily[op] {
			t.Errorf("AWS operation %s (%s) is in no documented policy: add it to runnerPolicyFamilies and to examples/runner-permissions/aws-*.json", op, where[0])
		}
	}
	for op := range awsOperationActions {
		if _, ok := inCode[op]; !ok {
			t.Errorf("awsOperationActions names %s, which the code no longer calls: remove it", op)
		}
	}
}

// The policies are valid IAM policy documents as the guide shows them.
func TestRunnerPermissions_awsPoliciesWellFormed(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(runnerPermissionsDir, "aws-*.json"))
	if len(files) != len(runnerPolicyFamilies) {
		t.Fatalf("%d aws-*.json files, %d families: each documented policy is a family of runnerPolicyFamilies", len(files), len(runnerPolicyFamilies))
	}
	for _, f := range files {
		p := readRunnerPolicy(t, filepath.Base(f))
		if p.Version != "2012-10-17" || len(p.Statement) == 0 {
			t.Errorf("%s: Version %q, %d statements", f, p.Version, len(p.Statement))
		}
		for _, st := range p.Statement {
			if st.Effect != "Allow" || len(st.Action) == 0 || len(st.Resource) == 0 || slices.Contains(st.Resource, "*") {
				t.Errorf("%s: statement %q must allow named actions on named resources", f, st.Sid)
			}
		}
	}
}

// runnerRules reads the documented Kubernetes RBAC rules of file.
func runnerRules(t testing.TB, file string) (kind, name string, rules []rbacv1.PolicyRule) {
	t.Helper()
	kind, name, rules, err := loadRunnerRules(file)
	if err != nil {
		t.Fatal(err)
	}
	return kind, name, rules
}

func loadRunnerRules(file string) (kind, name string, rules []rbacv1.PolicyRule, err error) {
	var obj struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		Rules []rbacv1.PolicyRule `json:"rules"`
	}
	b, err := os.ReadFile(filepath.Join(runnerPermissionsDir, file))
	if err == nil {
		err = yaml.UnmarshalStrict(b, &obj)
	}
	if err == nil && obj.APIVersion != "rbac.authorization.k8s.io/v1" {
		err = fmt.Errorf("apiVersion %q", obj.APIVersion)
	}
	if err != nil {
		return "", "", nil, fmt.Errorf("%s: %w", file, err)
	}
	return obj.Kind, obj.Metadata.Name, obj.Rules, nil
}

// The namespaced Role grants what the ClusterRole grants, so every
// namespaced request the ClusterRole is checked for is allowed by the Role
// too; only the cross-namespace list is left to its own ClusterRole.
func TestRunnerPermissions_roleMatchesClusterRole(t *testing.T) {
	ck, _, cluster := runnerRules(t, "kubernetes-clusterrole.yaml")
	rk, _, role := runnerRules(t, "kubernetes-role.yaml")
	xk, _, cross := runnerRules(t, "kubernetes-cross-namespace.yaml")
	if ck != "ClusterRole" || rk != "Role" || xk != "ClusterRole" {
		t.Fatalf("kinds %s, %s, %s", ck, rk, xk)
	}
	if !reflect.DeepEqual(cluster, role) {
		t.Errorf("the Role's rules differ from the ClusterRole's:\n%v\n%v", role, cluster)
	}
	if len(cross) != 1 || !kubeRulesAllow(cluster, kubeRequest{verb: "list", group: "flink.apache.org", resource: "flinkstatesnapshots"}) ||
		!kubeRulesAllow(cross, kubeRequest{verb: "list", group: "flink.apache.org", resource: "flinkstatesnapshots"}) {
		t.Errorf("the cross-namespace ClusterRole must be the one list on flinkstatesnapshots: %v", cross)
	}
}

// kubeRequest is what RBAC authorizes of one API request (Kubernetes
// documentation, "Authorization: Determine the Request Verb" and
// "Referring to resources"): the verb, API group, resource (with
// subresource), namespace ("" in all namespaces) and name.
type kubeRequest struct {
	verb, group, resource, namespace, name string
}

func (r kubeRequest) String() string {
	where := "in all namespaces"
	if r.namespace != "" {
		where = "in a namespace"
	}
	g := r.group
	if g == "" {
		g = "core"
	}
	return fmt.Sprintf("%s %s (%s) %s", r.verb, r.resource, g, where)
}

// parseKubeRequest reads the request attributes from the URL as the API
// server's RequestInfoFactory does (k8s.io/apiserver
// pkg/endpoints/request/requestinfo.go): /api/v1 or /apis/<group>/<version>,
// then optionally namespaces/<ns>, the resource, a name and a subresource;
// GET of a name is get, of a collection list (watch with watch=true), POST
// create, PUT update, PATCH patch, DELETE of a name delete, of a collection
// deletecollection.
func parseKubeRequest(req *http.Request) (kubeRequest, bool) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var r kubeRequest
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		r.group, parts = parts[1], parts[3:]
	default:
		return r, false
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		r.namespace, parts = parts[1], parts[2:]
	}
	r.resource = parts[0]
	if len(parts) > 1 {
		r.name = parts[1]
	}
	if len(parts) > 2 {
		r.resource += "/" + parts[2]
	}
	switch req.Method {
	case http.MethodGet:
		r.verb = "get"
		if r.name == "" {
			r.verb = "list"
			if req.URL.Query().Get("watch") == "true" {
				r.verb = "watch"
			}
		}
	case http.MethodPost:
		r.verb = "create"
	case http.MethodPut:
		r.verb = "update"
	case http.MethodPatch:
		r.verb = "patch"
	case http.MethodDelete:
		r.verb = "delete"
		if r.name == "" {
			r.verb = "deletecollection"
		}
	default:
		return r, false
	}
	return r, true
}

// kubeRulesAllow is RBAC's rule match (k8s.io/kubernetes
// pkg/apis/rbac/v1/evaluation_helpers.go: VerbMatches, APIGroupMatches,
// ResourceMatches, ResourceNameMatches).
func kubeRulesAllow(rules []rbacv1.PolicyRule, r kubeRequest) bool {
	has := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
	for _, rule := range rules {
		if has(rule.Verbs, r.verb) && has(rule.APIGroups, r.group) && has(rule.Resources, r.resource) &&
			(len(rule.ResourceNames) == 0 || slices.Contains(rule.ResourceNames, r.name)) {
			return true
		}
	}
	return false
}

// apiCalls records the AWS operations and Kubernetes requests the provider
// made during the acceptance run (apiCallObserver).
type apiCalls struct {
	mu   sync.Mutex
	aws  map[string]bool
	kube map[kubeRequest]bool
}

func (c *apiCalls) observe(subsystem string, req *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch subsystem {
	case logAWS:
		if svc, op := awsmiddleware.GetServiceID(req.Context()), awsmiddleware.GetOperationName(req.Context()); op != "" {
			c.aws[strings.ToLower(svc)+"."+op] = true
		}
	case logKube:
		if r, ok := parseKubeRequest(req); ok {
			r.name = "" // the rules name no object except the Role to bind, which is no request
			if r.namespace != "" {
				r.namespace = "-" // one namespace, whichever: the rules are the same in each
			}
			c.kube[r] = true
		}
	}
}

// recordAPICalls makes the provider report its API calls for the run.
func recordAPICalls() *apiCalls {
	c := &apiCalls{aws: map[string]bool{}, kube: map[kubeRequest]bool{}}
	apiCallObserver = c.observe
	return c
}

// uncovered lists the calls of the run that the documented permissions do
// not cover: an AWS operation whose IAM actions no documented policy grants
// (or that has none in awsOperationActions), a Kubernetes request the
// documented ClusterRole does not allow.
func (c *apiCalls) uncovered() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	var all iamPolicy
	for file := range runnerPolicyFamilies {
		p, err := loadRunnerPolicy(file)
		if err != nil {
			return []string{err.Error()}
		}
		all.Statement = append(all.Statement, p.Statement...)
	}
	for op := range c.aws {
		actions, known := awsOperationActions[op]
		if !known {
			out = append(out, "AWS operation "+op+" has no IAM action in awsOperationActions")
		}
		for _, a := range actions {
			if !all.allows(a) {
				out = append(out, fmt.Sprintf("AWS operation %s needs %s, which no policy in examples/runner-permissions grants", op, a))
			}
		}
	}
	_, _, rules, err := loadRunnerRules("kubernetes-clusterrole.yaml")
	if err != nil {
		return append(out, err.Error())
	}
	for r := range c.kube {
		if !kubeRulesAllow(rules, r) {
			out = append(out, fmt.Sprintf("Kubernetes request %s is not allowed by examples/runner-permissions/kubernetes-clusterrole.yaml", r))
		}
	}
	sort.Strings(out)
	return out
}

// The check of the recorded calls fails for a call no documented
// permission covers, and passes for those it does.
func TestRunnerPermissions_uncoveredCallsAreReported(t *testing.T) {
	c := &apiCalls{aws: map[string]bool{"s3.PutObject": true, "s3.GetBucketAcl": true, "sts.GetCallerIdentity": true},
		kube: map[kubeRequest]bool{}}
	for _, u := range []struct{ method, url string }{
		{"PATCH", "https://k/apis/flink.apache.org/v1beta1/namespaces/a/flinkdeployments/orders"},
		{"GET", "https://k/apis/flink.apache.org/v1beta1/flinkstatesnapshots?labelSelector=x"},
		{"GET", "https://k/api/v1/namespaces/a/secrets"},
	} {
		req, _ := http.NewRequest(u.method, u.url, nil)
		c.observe(logKube, req)
	}
	got := c.uncovered()
	want := []string{
		"AWS operation s3.GetBucketAcl has no IAM action in awsOperationActions",
		"Kubernetes request list secrets (core) in a namespace is not allowed by examples/runner-permissions/kubernetes-clusterrole.yaml",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("uncovered:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
