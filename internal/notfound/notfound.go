// Package notfound is the provider's one vocabulary for "does not exist":
// one error type, Error, and one predicate, Is, after
// hashicorp/terraform-provider-aws's retry.NotFoundError and
// tfresource.NotFound (internal/retry, internal/tfresource).
//
// A service's own typed answer becomes an Error at the call that received
// it, and only there: awsclient.NotFound for the AWS SDK's typed errors
// (S3 NoSuchBucket, NoSuchKey, NotFound; IAM NoSuchEntity; EKS
// ResourceNotFoundException), kube.NotFound for the Kubernetes API's
// NotFound status, and the finders of s3state and iamrole for the answers
// that mean "this configuration is not set". An error that merely passed
// through a later call is not converted, so Is never takes "a listing
// failed because the role vanished" for "the role does not exist" unless
// the finder that owns the decision says so.
package notfound

import "errors"

// Error says that a service answered, in a typed error, that something
// does not exist. Callers forget a resource, or take a deletion as done,
// only on this.
type Error struct {
	What string // what does not exist: "IAM role flink-app"
	Err  error  // the service's answer
}

func (e *Error) Error() string { return e.What + " does not exist: " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Is tells whether err is, or wraps, an *Error.
func Is(err error) bool {
	var nf *Error
	return errors.As(err, &nf)
}

// When returns err as an *Error about what when typed recognises it, and
// err as it is otherwise (nil included).
func When(what string, err error, typed func(error) bool) error {
	if err != nil && typed(err) {
		return &Error{What: what, Err: err}
	}
	return err
}
