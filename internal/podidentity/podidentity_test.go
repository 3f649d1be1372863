package podidentity

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// fake answers each call with the next of its errors (nil when none is left).
type fake struct {
	errs     map[string][]error
	calls    map[string]int
	tagged   map[string]string
	untagged []string
}

func (f *fake) next(op string) error {
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[op]++
	if len(f.errs[op]) == 0 {
		return nil
	}
	err := f.errs[op][0]
	f.errs[op] = f.errs[op][1:]
	return err
}

func (f *fake) CreatePodIdentityAssociation(_ context.Context, in *eks.CreatePodIdentityAssociationInput, _ ...func(*eks.Options)) (*eks.CreatePodIdentityAssociationOutput, error) {
	if err := f.next("Create"); err != nil {
		return nil, err
	}
	return &eks.CreatePodIdentityAssociationOutput{Association: &ekstypes.PodIdentityAssociation{
		AssociationId: aws.String("a-1"), AssociationArn: aws.String("arn:aws:eks:::podidentityassociation/" + aws.ToString(in.ClusterName) + "/a-1")}}, nil
}

func (f *fake) DescribePodIdentityAssociation(_ context.Context, _ *eks.DescribePodIdentityAssociationInput, _ ...func(*eks.Options)) (*eks.DescribePodIdentityAssociationOutput, error) {
	if err := f.next("Describe"); err != nil {
		return nil, err
	}
	return &eks.DescribePodIdentityAssociationOutput{Association: &ekstypes.PodIdentityAssociation{
		Namespace: aws.String("ns"), ServiceAccount: aws.String("sa"), RoleArn: aws.String("arn:aws:iam::1:role/r"), AssociationArn: aws.String("arn")}}, nil
}

func (f *fake) UpdatePodIdentityAssociation(context.Context, *eks.UpdatePodIdentityAssociationInput, ...func(*eks.Options)) (*eks.UpdatePodIdentityAssociationOutput, error) {
	return &eks.UpdatePodIdentityAssociationOutput{}, f.next("Update")
}

func (f *fake) DeletePodIdentityAssociation(context.Context, *eks.DeletePodIdentityAssociationInput, ...func(*eks.Options)) (*eks.DeletePodIdentityAssociationOutput, error) {
	return &eks.DeletePodIdentityAssociationOutput{}, f.next("Delete")
}

func (f *fake) TagResource(_ context.Context, in *eks.TagResourceInput, _ ...func(*eks.Options)) (*eks.TagResourceOutput, error) {
	f.tagged = in.Tags
	return &eks.TagResourceOutput{}, f.next("Tag")
}

func (f *fake) UntagResource(_ context.Context, in *eks.UntagResourceInput, _ ...func(*eks.Options)) (*eks.UntagResourceOutput, error) {
	f.untagged = in.TagKeys
	return &eks.UntagResourceOutput{}, f.next("Untag")
}

// SyncTags removes the keys no longer wanted and sets the wanted ones; no
// call when there is nothing to remove or set.
func TestSyncTags(t *testing.T) {
	f := &fake{}
	if err := SyncTags(context.Background(), f, "arn", map[string]string{"a": "1", "b": "2", "c": "3"}, map[string]string{"a": "1", "d": "4"}); err != nil {
		t.Fatal(err)
	}
	if len(f.untagged) != 2 || f.untagged[0] != "b" || f.untagged[1] != "c" || len(f.tagged) != 2 || f.tagged["d"] != "4" {
		t.Fatalf("untagged %v tagged %v", f.untagged, f.tagged)
	}
	f = &fake{}
	if err := SyncTags(context.Background(), f, "arn", nil, nil); err != nil || f.calls["Tag"]+f.calls["Untag"] != 0 {
		t.Fatalf("calls %v, err %v", f.calls, err)
	}
}

func gone() error { return &ekstypes.ResourceNotFoundException{Message: aws.String("no association")} }

// A role EKS cannot use yet is retried, then the association is created.
func TestCreateRetriesARoleNotYetUsable(t *testing.T) {
	notYet := &ekstypes.InvalidParameterException{Message: aws.String("Role arn:aws:iam::1:role/r does not exist")}
	f := &fake{errs: map[string][]error{"Create": {notYet}}}
	a, err := Create(context.Background(), f, Association{Cluster: "prod", Namespace: "ns", ServiceAccount: "sa", RoleARN: "arn:aws:iam::1:role/r"}, 5*time.Second)
	if err != nil || a.ID != "a-1" || a.ARN == "" || f.calls["Create"] != 2 {
		t.Fatalf("create: %+v %v after %d calls", a, err, f.calls["Create"])
	}
	denied := &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "no"}
	if _, err := Create(context.Background(), &fake{errs: map[string][]error{"Create": {denied}}}, a, time.Second); !errors.Is(err, denied) {
		t.Fatalf("a denial is returned at once: %v", err)
	}
}

// Only EKS's typed ResourceNotFoundException means the association is gone.
func TestFindNotFoundOnlyOnResourceNotFound(t *testing.T) {
	ctx := context.Background()
	a, err := Find(ctx, &fake{}, "prod", "a-1")
	if err != nil || !reflect.DeepEqual(a, Association{Cluster: "prod", Namespace: "ns", ServiceAccount: "sa", RoleARN: "arn:aws:iam::1:role/r", ID: "a-1", ARN: "arn"}) {
		t.Fatalf("find: %+v %v", a, err)
	}
	if _, err := Find(ctx, &fake{errs: map[string][]error{"Describe": {gone()}}}, "prod", "a-1"); !notfound.Is(err) {
		t.Fatalf("ResourceNotFoundException: %v", err)
	}
	for _, answer := range []error{&smithy.GenericAPIError{Code: "NotFound"}, &smithy.GenericAPIError{Code: "AccessDeniedException"}, errors.New("reset")} {
		if _, err := Find(ctx, &fake{errs: map[string][]error{"Describe": {answer}}}, "prod", "a-1"); err == nil || notfound.Is(err) {
			t.Errorf("%v taken for not found: %v", answer, err)
		}
	}
}

func TestDeleteGoneAlreadyIsDone(t *testing.T) {
	ctx := context.Background()
	if err := Delete(ctx, &fake{errs: map[string][]error{"Delete": {gone()}}}, "prod", "a-1"); err != nil {
		t.Fatalf("gone already: %v", err)
	}
	denied := &smithy.GenericAPIError{Code: "AccessDeniedException"}
	if err := Delete(ctx, &fake{errs: map[string][]error{"Delete": {denied}}}, "prod", "a-1"); !errors.Is(err, denied) {
		t.Fatalf("a denial: %v", err)
	}
	if err := UpdateRole(ctx, &fake{errs: map[string][]error{"Update": {denied}}}, "prod", "a-1", "arn", time.Second); !errors.Is(err, denied) {
		t.Fatalf("update: %v", err)
	}
}
