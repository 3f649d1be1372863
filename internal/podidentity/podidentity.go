// Package podidentity is the EKS side of flinkstate_pod_identity_association:
// the finder and writers of an EKS Pod Identity association (EKS API
// Reference: CreatePodIdentityAssociation, DescribePodIdentityAssociation,
// UpdatePodIdentityAssociation, DeletePodIdentityAssociation, TagResource,
// UntagResource), as iamrole is
// for IAM roles. The Terraform resource is a thin adapter over it.
package podidentity

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// API is the part of the EKS client the association needs.
type API interface {
	CreatePodIdentityAssociation(ctx context.Context, in *eks.CreatePodIdentityAssociationInput, opts ...func(*eks.Options)) (*eks.CreatePodIdentityAssociationOutput, error)
	DescribePodIdentityAssociation(ctx context.Context, in *eks.DescribePodIdentityAssociationInput, opts ...func(*eks.Options)) (*eks.DescribePodIdentityAssociationOutput, error)
	UpdatePodIdentityAssociation(ctx context.Context, in *eks.UpdatePodIdentityAssociationInput, opts ...func(*eks.Options)) (*eks.UpdatePodIdentityAssociationOutput, error)
	DeletePodIdentityAssociation(ctx context.Context, in *eks.DeletePodIdentityAssociationInput, opts ...func(*eks.Options)) (*eks.DeletePodIdentityAssociationOutput, error)
	TagResource(ctx context.Context, in *eks.TagResourceInput, opts ...func(*eks.Options)) (*eks.TagResourceOutput, error)
	UntagResource(ctx context.Context, in *eks.UntagResourceInput, opts ...func(*eks.Options)) (*eks.UntagResourceOutput, error)
}

// Association is what EKS holds for one association.
type Association struct {
	Cluster        string
	Namespace      string
	ServiceAccount string
	RoleARN        string
	ID             string // the association ID EKS assigned
	ARN            string
	Tags           map[string]string
}

// Ref names an association the way it is looked up: "cluster,id".
func Ref(cluster, id string) string { return cluster + "," + id }

// Create creates the association of a.Cluster, a.Namespace,
// a.ServiceAccount and a.RoleARN and returns it with its ID and ARN. A role
// created seconds ago may not be usable by EKS yet: that answer is retried
// within timeout (awsclient.IAMPropagating).
func Create(ctx context.Context, c API, a Association, timeout time.Duration) (Association, error) {
	var out *eks.CreatePodIdentityAssociationOutput
	err := awsclient.Retry(ctx, timeout, awsclient.IAMPropagating, func() (err error) {
		out, err = c.CreatePodIdentityAssociation(ctx, &eks.CreatePodIdentityAssociationInput{
			ClusterName:    aws.String(a.Cluster),
			Namespace:      aws.String(a.Namespace),
			ServiceAccount: aws.String(a.ServiceAccount),
			RoleArn:        aws.String(a.RoleARN),
			Tags:           a.Tags,
		})
		return err
	})
	if err != nil {
		return a, fmt.Errorf("eks:CreatePodIdentityAssociation: %w", err)
	}
	a.ID = aws.ToString(out.Association.AssociationId)
	a.ARN = aws.ToString(out.Association.AssociationArn)
	return a, nil
}

// Find returns the association, a *notfound.Error when EKS answers that it
// does not exist (ResourceNotFoundException).
func Find(ctx context.Context, c API, cluster, id string) (Association, error) {
	out, err := c.DescribePodIdentityAssociation(ctx, &eks.DescribePodIdentityAssociationInput{
		ClusterName: aws.String(cluster), AssociationId: aws.String(id)})
	if err = awsclient.NotFound("Pod Identity association "+Ref(cluster, id), err); err != nil {
		return Association{}, fmt.Errorf("eks:DescribePodIdentityAssociation: %w", err)
	}
	a := out.Association
	return Association{
		Cluster:        cluster,
		Namespace:      aws.ToString(a.Namespace),
		ServiceAccount: aws.ToString(a.ServiceAccount),
		RoleARN:        aws.ToString(a.RoleArn),
		ID:             id,
		ARN:            aws.ToString(a.AssociationArn),
		Tags:           a.Tags,
	}, nil
}

// SyncTags makes the association's tags want, given the old ones
// (TagResource and UntagResource on its ARN).
func SyncTags(ctx context.Context, c API, arn string, old, want map[string]string) error {
	var remove []string
	for k := range old {
		if _, ok := want[k]; !ok {
			remove = append(remove, k)
		}
	}
	sort.Strings(remove)
	if len(remove) > 0 {
		if _, err := c.UntagResource(ctx, &eks.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: remove}); err != nil {
			return fmt.Errorf("eks:UntagResource %s: %w", arn, err)
		}
	}
	if len(want) > 0 {
		if _, err := c.TagResource(ctx, &eks.TagResourceInput{ResourceArn: aws.String(arn), Tags: want}); err != nil {
			return fmt.Errorf("eks:TagResource %s: %w", arn, err)
		}
	}
	return nil
}

// UpdateRole points the association at roleARN, retrying within timeout
// while EKS cannot use the role yet, as Create does.
func UpdateRole(ctx context.Context, c API, cluster, id, roleARN string, timeout time.Duration) error {
	err := awsclient.Retry(ctx, timeout, awsclient.IAMPropagating, func() error {
		_, err := c.UpdatePodIdentityAssociation(ctx, &eks.UpdatePodIdentityAssociationInput{
			ClusterName: aws.String(cluster), AssociationId: aws.String(id), RoleArn: aws.String(roleARN)})
		return err
	})
	if err != nil {
		return fmt.Errorf("eks:UpdatePodIdentityAssociation %s: %w", Ref(cluster, id), err)
	}
	return nil
}

// Delete deletes the association; one EKS says does not exist is gone
// already.
func Delete(ctx context.Context, c API, cluster, id string) error {
	_, err := c.DeletePodIdentityAssociation(ctx, &eks.DeletePodIdentityAssociationInput{
		ClusterName: aws.String(cluster), AssociationId: aws.String(id)})
	if err = awsclient.NotFound("Pod Identity association "+Ref(cluster, id), err); err != nil && !notfound.Is(err) {
		return fmt.Errorf("eks:DeletePodIdentityAssociation: %w", err)
	}
	return nil
}
