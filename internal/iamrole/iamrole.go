// Package iamrole makes the IAM calls of a Flink state role: find it (a
// typed not-found), create it without adopting an existing one, keep its
// one inline policy, trust, description and tags as configured, and remove
// the policies someone else put on it. The documents themselves come from
// iampolicy. It does not import Terraform.
package iamrole

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/iampolicy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// InlinePolicyName is the role's one inline policy, owned by the provider.
const InlinePolicyName = "flinkstate-state-access"

// API is the part of the IAM client a state role uses.
type API interface {
	CreateRole(ctx context.Context, in *iam.CreateRoleInput, opts ...func(*iam.Options)) (*iam.CreateRoleOutput, error)
	GetRole(ctx context.Context, in *iam.GetRoleInput, opts ...func(*iam.Options)) (*iam.GetRoleOutput, error)
	UpdateRole(ctx context.Context, in *iam.UpdateRoleInput, opts ...func(*iam.Options)) (*iam.UpdateRoleOutput, error)
	UpdateAssumeRolePolicy(ctx context.Context, in *iam.UpdateAssumeRolePolicyInput, opts ...func(*iam.Options)) (*iam.UpdateAssumeRolePolicyOutput, error)
	DeleteRole(ctx context.Context, in *iam.DeleteRoleInput, opts ...func(*iam.Options)) (*iam.DeleteRoleOutput, error)
	GetRolePolicy(ctx context.Context, in *iam.GetRolePolicyInput, opts ...func(*iam.Options)) (*iam.GetRolePolicyOutput, error)
	PutRolePolicy(ctx context.Context, in *iam.PutRolePolicyInput, opts ...func(*iam.Options)) (*iam.PutRolePolicyOutput, error)
	DeleteRolePolicy(ctx context.Context, in *iam.DeleteRolePolicyInput, opts ...func(*iam.Options)) (*iam.DeleteRolePolicyOutput, error)
	ListRolePolicies(ctx context.Context, in *iam.ListRolePoliciesInput, opts ...func(*iam.Options)) (*iam.ListRolePoliciesOutput, error)
	ListAttachedRolePolicies(ctx context.Context, in *iam.ListAttachedRolePoliciesInput, opts ...func(*iam.Options)) (*iam.ListAttachedRolePoliciesOutput, error)
	DetachRolePolicy(ctx context.Context, in *iam.DetachRolePolicyInput, opts ...func(*iam.Options)) (*iam.DetachRolePolicyOutput, error)
	TagRole(ctx context.Context, in *iam.TagRoleInput, opts ...func(*iam.Options)) (*iam.TagRoleOutput, error)
	UntagRole(ctx context.Context, in *iam.UntagRoleInput, opts ...func(*iam.Options)) (*iam.UntagRoleOutput, error)
}

// Role is what a read finds on a role.
type Role struct {
	ARN         string
	Description string
	Trust       string            // the trust policy, as JSON
	Tags        map[string]string // every tag on the role
	// Policy is the provider's inline policy as JSON, "" when it is not
	// there (removed outside Terraform).
	Policy string
	// Extra names the policies on the role the provider did not put there:
	// "inline:NAME", "attached:ARN".
	Extra []string
}

// FindRole returns the role, a *notfound.Error when IAM says NoSuchEntity.
func FindRole(ctx context.Context, c API, name string) (*iamtypes.Role, error) {
	out, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
	if err = awsclient.NotFound("IAM role "+name, err); err != nil {
		return nil, fmt.Errorf("iam:GetRole %s: %w", name, err)
	}
	if out.Role == nil {
		return nil, &notfound.Error{What: "IAM role " + name, Err: errors.New("empty answer")}
	}
	return out.Role, nil
}

// FindInlinePolicy returns the provider's inline policy as JSON, a
// *notfound.Error when the role does not have it.
func FindInlinePolicy(ctx context.Context, c API, role string) (string, error) {
	out, err := c.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(InlinePolicyName)})
	if err = awsclient.NotFound("inline policy "+InlinePolicyName+" of IAM role "+role, err); err != nil {
		return "", fmt.Errorf("iam:GetRolePolicy %s/%s: %w", role, InlinePolicyName, err)
	}
	return iampolicy.Decode(aws.ToString(out.PolicyDocument)), nil
}

// Read reads a role, its inline policy and the policies others put on it;
// a *notfound.Error when the role does not exist.
func Read(ctx context.Context, c API, name string) (Role, error) {
	var r Role
	role, err := FindRole(ctx, c, name)
	if err != nil {
		return r, err
	}
	r.ARN, r.Description = aws.ToString(role.Arn), aws.ToString(role.Description)
	r.Trust = iampolicy.Decode(aws.ToString(role.AssumeRolePolicyDocument))
	r.Tags = map[string]string{}
	for _, t := range role.Tags {
		r.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	switch r.Policy, err = FindInlinePolicy(ctx, c, name); {
	case notfound.Is(err):
		r.Policy = ""
	case err != nil:
		return r, err
	}
	r.Extra, err = ExtraPolicies(ctx, c, name)
	return r, err
}

// ExtraPolicies lists the inline policies other than the provider's and
// every attached managed policy, "inline:NAME" and "attached:ARN", sorted.
// The role's policies are managed exclusively, as hashicorp/aws's
// aws_iam_role_policies_exclusive and aws_iam_role_policy_attachments_exclusive
// do.
func ExtraPolicies(ctx context.Context, c API, role string) ([]string, error) {
	var out []string
	inline := iam.NewListRolePoliciesPaginator(c, &iam.ListRolePoliciesInput{RoleName: aws.String(role)})
	for inline.HasMorePages() {
		page, err := inline.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("iam:ListRolePolicies %s: %w", role, err)
		}
		for _, n := range page.PolicyNames {
			if n != InlinePolicyName {
				out = append(out, "inline:"+n)
			}
		}
	}
	attached := iam.NewListAttachedRolePoliciesPaginator(c, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(role)})
	for attached.HasMorePages() {
		page, err := attached.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("iam:ListAttachedRolePolicies %s: %w", role, err)
		}
		for _, p := range page.AttachedPolicies {
			out = append(out, "attached:"+aws.ToString(p.PolicyArn))
		}
	}
	slices.Sort(out)
	return out, nil
}

// Create creates the role and returns its ARN. A trust policy naming an
// OIDC provider created seconds ago can be "Invalid principal" until IAM
// has propagated it, so that is retried within timeout (awsclient.IAMPropagating).
// A role of that name that exists already answers EntityAlreadyExists,
// typed (IsAlreadyExists): IAM's CreateRole never adopts.
func Create(ctx context.Context, c API, name, trust, description string, tags map[string]string, timeout time.Duration) (string, error) {
	in := &iam.CreateRoleInput{RoleName: aws.String(name), AssumeRolePolicyDocument: aws.String(trust), Tags: tagList(tags)}
	if description != "" {
		in.Description = aws.String(description)
	}
	var out *iam.CreateRoleOutput
	err := awsclient.Retry(ctx, timeout, awsclient.IAMPropagating, func() (err error) {
		out, err = c.CreateRole(ctx, in)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("iam:CreateRole %s: %w", name, err)
	}
	return aws.ToString(out.Role.Arn), nil
}

// IsAlreadyExists recognises CreateRole's typed answer for a role name in use.
func IsAlreadyExists(err error) bool {
	var exists *iamtypes.EntityAlreadyExistsException
	return errors.As(err, &exists)
}

// PutPolicy writes the provider's inline policy. Right after CreateRole the
// role may not be visible yet (NoSuchEntity): retried within timeout.
func PutPolicy(ctx context.Context, c API, role, doc string, timeout time.Duration) error {
	err := awsclient.Retry(ctx, timeout, awsclient.IAMPropagating, func() error {
		_, err := c.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(InlinePolicyName), PolicyDocument: aws.String(doc)})
		return err
	})
	if err != nil {
		return fmt.Errorf("iam:PutRolePolicy %s/%s: %w", role, InlinePolicyName, err)
	}
	return nil
}

// UpdateTrust replaces the trust policy, retrying IAM propagation of a new
// principal within timeout (hashicorp/aws internal/service/iam/role.go
// retries UpdateAssumeRolePolicy the same way).
func UpdateTrust(ctx context.Context, c API, role, trust string, timeout time.Duration) error {
	err := awsclient.Retry(ctx, timeout, awsclient.IAMPropagating, func() error {
		_, err := c.UpdateAssumeRolePolicy(ctx, &iam.UpdateAssumeRolePolicyInput{RoleName: aws.String(role), PolicyDocument: aws.String(trust)})
		return err
	})
	if err != nil {
		return fmt.Errorf("iam:UpdateAssumeRolePolicy %s: %w", role, err)
	}
	return nil
}

// UpdateDescription sets the role's description ("" clears it).
func UpdateDescription(ctx context.Context, c API, role, description string) error {
	if _, err := c.UpdateRole(ctx, &iam.UpdateRoleInput{RoleName: aws.String(role), Description: aws.String(description)}); err != nil {
		return fmt.Errorf("iam:UpdateRole %s: %w", role, err)
	}
	return nil
}

// TagChanges is what brings tags from old to want: the keys to remove, and
// the tags to set (all of want: TagRole overwrites a key's value).
func TagChanges(old, want map[string]string) (remove []string, set []iamtypes.Tag) {
	for k := range old {
		if _, ok := want[k]; !ok {
			remove = append(remove, k)
		}
	}
	slices.Sort(remove)
	return remove, tagList(want)
}

// SyncTags makes the role's tags want, given the old ones.
func SyncTags(ctx context.Context, c API, role string, old, want map[string]string) error {
	remove, set := TagChanges(old, want)
	if len(remove) > 0 {
		if _, err := c.UntagRole(ctx, &iam.UntagRoleInput{RoleName: aws.String(role), TagKeys: remove}); err != nil {
			return fmt.Errorf("iam:UntagRole %s: %w", role, err)
		}
	}
	if len(set) > 0 {
		if _, err := c.TagRole(ctx, &iam.TagRoleInput{RoleName: aws.String(role), Tags: set}); err != nil {
			return fmt.Errorf("iam:TagRole %s: %w", role, err)
		}
	}
	return nil
}

// RemoveExtra deletes the extra inline policies and detaches the extra
// managed ones (as ExtraPolicies names them); one gone already is fine.
func RemoveExtra(ctx context.Context, c API, role string, extra []string) error {
	for _, e := range extra {
		var err error
		action := "iam:DeleteRolePolicy"
		if n, ok := strings.CutPrefix(e, "inline:"); ok {
			_, err = c.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(n)})
		} else if a, ok := strings.CutPrefix(e, "attached:"); ok {
			action = "iam:DetachRolePolicy"
			_, err = c.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String(role), PolicyArn: aws.String(a)})
		} else {
			return fmt.Errorf("%q names no policy (want inline:NAME or attached:ARN)", e)
		}
		if err = awsclient.NotFound(e+" of IAM role "+role, err); err != nil && !notfound.Is(err) {
			return fmt.Errorf("%s %s, %s: %w", action, role, e, err)
		}
	}
	return nil
}

// Delete deletes the provider's inline policy, then the role. IAM refuses to
// delete a role that still has policies (DeleteConflict, IAM API Reference,
// DeleteRole: "you must first remove … inline policies … attached managed
// policies"); the error then says so. ConcurrentModification is retried
// within timeout. A role gone already is fine.
func Delete(ctx context.Context, c API, role string, timeout time.Duration) error {
	_, err := c.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(InlinePolicyName)})
	if err = awsclient.NotFound("inline policy "+InlinePolicyName+" of IAM role "+role, err); err != nil && !notfound.Is(err) {
		return fmt.Errorf("iam:DeleteRolePolicy %s/%s: %w", role, InlinePolicyName, err)
	}
	err = awsclient.Retry(ctx, timeout, func(err error) bool { return awsclient.ErrorCode(err) == "ConcurrentModification" }, func() error {
		_, err := c.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String(role)})
		return err
	})
	switch err = awsclient.NotFound("IAM role "+role, err); {
	case err == nil || notfound.Is(err):
		return nil
	case awsclient.ErrorCode(err) == "DeleteConflict":
		return fmt.Errorf("iam:DeleteRole %s: %w (other policies or instance profiles were attached to the role outside this resource; detach them first)", role, err)
	}
	return fmt.Errorf("iam:DeleteRole %s: %w", role, err)
}

// tagList is tags in key order.
func tagList(tags map[string]string) []iamtypes.Tag {
	var out []iamtypes.Tag
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		out = append(out, iamtypes.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return out
}
