package iamrole

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/smithy-go"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// answers is an IAM client whose calls answer the given errors and record
// what was asked, for the error classification and the call choice. The
// acceptance tests cover the real calls.
type answers struct {
	API
	err   map[string]error
	calls *[]string
}

func (a answers) record(s string) {
	if a.calls != nil {
		*a.calls = append(*a.calls, s)
	}
}

func (a answers) GetRole(_ context.Context, in *iam.GetRoleInput, _ ...func(*iam.Options)) (*iam.GetRoleOutput, error) {
	return &iam.GetRoleOutput{Role: &iamtypes.Role{RoleName: in.RoleName, Arn: aws.String("arn:aws:iam::111122223333:role/" + *in.RoleName),
		AssumeRolePolicyDocument: aws.String("%7B%7D"), Tags: []iamtypes.Tag{{Key: aws.String("team"), Value: aws.String("data")}}}}, a.err["GetRole"]
}
func (a answers) GetRolePolicy(context.Context, *iam.GetRolePolicyInput, ...func(*iam.Options)) (*iam.GetRolePolicyOutput, error) {
	return &iam.GetRolePolicyOutput{PolicyDocument: aws.String("%7B%22Version%22%3A%222012-10-17%22%7D")}, a.err["GetRolePolicy"]
}
func (a answers) ListRolePolicies(context.Context, *iam.ListRolePoliciesInput, ...func(*iam.Options)) (*iam.ListRolePoliciesOutput, error) {
	return &iam.ListRolePoliciesOutput{PolicyNames: []string{InlinePolicyName, "theirs"}}, a.err["ListRolePolicies"]
}
func (a answers) ListAttachedRolePolicies(context.Context, *iam.ListAttachedRolePoliciesInput, ...func(*iam.Options)) (*iam.ListAttachedRolePoliciesOutput, error) {
	return &iam.ListAttachedRolePoliciesOutput{AttachedPolicies: []iamtypes.AttachedPolicy{{PolicyArn: aws.String("arn:aws:iam::aws:policy/AdministratorAccess")}}}, a.err["ListAttachedRolePolicies"]
}
func (a answers) DeleteRolePolicy(_ context.Context, in *iam.DeleteRolePolicyInput, _ ...func(*iam.Options)) (*iam.DeleteRolePolicyOutput, error) {
	a.record("DeleteRolePolicy " + *in.PolicyName)
	return &iam.DeleteRolePolicyOutput{}, a.err["DeleteRolePolicy"]
}
func (a answers) DetachRolePolicy(_ context.Context, in *iam.DetachRolePolicyInput, _ ...func(*iam.Options)) (*iam.DetachRolePolicyOutput, error) {
	a.record("DetachRolePolicy " + *in.PolicyArn)
	return &iam.DetachRolePolicyOutput{}, a.err["DetachRolePolicy"]
}
func (a answers) DeleteRole(context.Context, *iam.DeleteRoleInput, ...func(*iam.Options)) (*iam.DeleteRoleOutput, error) {
	a.record("DeleteRole")
	return &iam.DeleteRoleOutput{}, a.err["DeleteRole"]
}

func noSuchEntity() error { return &iamtypes.NoSuchEntityException{Message: aws.String("not there")} }

func TestFindRoleNotFoundOnlyOnNoSuchEntity(t *testing.T) {
	ctx := context.Background()
	if _, err := FindRole(ctx, answers{err: map[string]error{"GetRole": noSuchEntity()}}, "r"); !notfound.Is(err) {
		t.Fatalf("NoSuchEntity: %v", err)
	}
	// A body-less 404 (a proxy, a wrong endpoint) or a denial is not "gone".
	for _, err := range []error{&smithy.GenericAPIError{Code: "NotFound"}, &smithy.GenericAPIError{Code: "AccessDenied"}, errors.New("reset")} {
		if _, got := FindRole(ctx, answers{err: map[string]error{"GetRole": err}}, "r"); got == nil || notfound.Is(got) {
			t.Errorf("%v taken for not found: %v", err, got)
		}
	}
}

func TestRead(t *testing.T) {
	ctx := context.Background()
	r, err := Read(ctx, answers{}, "r")
	if err != nil {
		t.Fatal(err)
	}
	if r.Trust != "{}" || r.Policy != `{"Version":"2012-10-17"}` || r.Tags["team"] != "data" {
		t.Fatalf("read %+v", r)
	}
	if want := []string{"attached:arn:aws:iam::aws:policy/AdministratorAccess", "inline:theirs"}; !reflect.DeepEqual(r.Extra, want) {
		t.Fatalf("extra %v, want %v (the provider's own inline policy is not extra)", r.Extra, want)
	}
	// The inline policy removed outside Terraform reads as "", not an error.
	r, err = Read(ctx, answers{err: map[string]error{"GetRolePolicy": noSuchEntity()}}, "r")
	if err != nil || r.Policy != "" {
		t.Fatalf("missing inline policy: %q %v", r.Policy, err)
	}
	// Only the role's own NoSuchEntity means the role is gone.
	if _, err := Read(ctx, answers{err: map[string]error{"ListRolePolicies": noSuchEntity()}}, "r"); err == nil || notfound.Is(err) {
		t.Fatalf("a failed listing: %v", err)
	}
}

func TestTagChanges(t *testing.T) {
	remove, set := TagChanges(map[string]string{"a": "1", "b": "2", "c": "3"}, map[string]string{"b": "2", "c": "4", "d": "5"})
	if !reflect.DeepEqual(remove, []string{"a"}) {
		t.Fatalf("remove %v", remove)
	}
	var keys []string
	for _, tg := range set {
		keys = append(keys, *tg.Key+"="+*tg.Value)
	}
	if !reflect.DeepEqual(keys, []string{"b=2", "c=4", "d=5"}) {
		t.Fatalf("set %v", keys)
	}
}

func TestRemoveExtra(t *testing.T) {
	ctx := context.Background()
	var calls []string
	err := RemoveExtra(ctx, answers{calls: &calls, err: map[string]error{"DetachRolePolicy": noSuchEntity()}}, "r",
		[]string{"inline:theirs", "attached:arn:aws:iam::aws:policy/AdministratorAccess"})
	if err != nil {
		t.Fatalf("one gone already is fine: %v", err)
	}
	if want := []string{"DeleteRolePolicy theirs", "DetachRolePolicy arn:aws:iam::aws:policy/AdministratorAccess"}; !reflect.DeepEqual(calls, want) {
		t.Fatalf("calls %v, want %v", calls, want)
	}
	if err := RemoveExtra(ctx, answers{}, "r", []string{"theirs"}); err == nil {
		t.Fatal("a name without inline:/attached: accepted")
	}
}

func TestDelete(t *testing.T) {
	ctx := context.Background()
	var calls []string
	if err := Delete(ctx, answers{calls: &calls, err: map[string]error{"DeleteRolePolicy": noSuchEntity()}}, "r", time.Second); err != nil {
		t.Fatal(err)
	}
	if want := []string{"DeleteRolePolicy " + InlinePolicyName, "DeleteRole"}; !reflect.DeepEqual(calls, want) {
		t.Fatalf("calls %v, want %v", calls, want)
	}
	if err := Delete(ctx, answers{err: map[string]error{"DeleteRole": noSuchEntity()}}, "r", time.Second); err != nil {
		t.Fatalf("a role gone already: %v", err)
	}
	conflict := &smithy.GenericAPIError{Code: "DeleteConflict", Message: "Cannot delete entity, must detach all policies first."}
	if err := Delete(ctx, answers{err: map[string]error{"DeleteRole": conflict}}, "r", time.Second); err == nil || !strings.Contains(err.Error(), "detach them first") {
		t.Fatalf("DeleteConflict: %v", err)
	}
}
