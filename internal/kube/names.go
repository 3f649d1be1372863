package kube

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Kubernetes naming rules, from apimachinery's validation (the API
// server's own code), as sentences for plan-time diagnostics.

func joinErrs(errs []string) string {
	if len(errs) == 0 {
		return ""
	}
	return "is not valid: " + strings.Join(errs, "; ")
}

func mustBe(what string, errs []string) string {
	if len(errs) == 0 {
		return ""
	}
	return "must be a " + what + ": " + strings.Join(errs, "; ")
}

// ValidateNamespace: a namespace name is a DNS-1123 label.
func ValidateNamespace(s string) string {
	return mustBe("DNS-1123 label", validation.IsDNS1123Label(s))
}

// ValidateObjectName: ServiceAccount, FlinkDeployment and Role names are
// DNS-1123 subdomains.
func ValidateObjectName(s string) string {
	return mustBe("DNS-1123 subdomain", validation.IsDNS1123Subdomain(s))
}

// MaxDeploymentNameLength is the operator's own limit: its
// DefaultValidator.validateDeploymentName pattern
// [a-z]([-a-z\d]{0,43}[a-z\d])? allows at most 45 characters
// (flink-kubernetes-operator release-1.15.0), so every derived name
// (-rest, -config-map, -cluster-config-map) fits.
const MaxDeploymentNameLength = 45

// ValidateDeploymentName: a FlinkDeployment name becomes the name of
// Services and ConfigMaps, so it must be a DNS-1123 label.
func ValidateDeploymentName(s string) string {
	if len(s) > MaxDeploymentNameLength {
		return fmt.Sprintf("must be at most %d characters (the operator derives Service and ConfigMap names from it), got %d", MaxDeploymentNameLength, len(s))
	}
	if msg := mustBe("DNS-1123 label", validation.IsDNS1123Label(s)); msg != "" {
		return msg
	}
	// The same pattern: a DNS-1123 label that starts with a letter.
	if s[0] < 'a' || s[0] > 'z' {
		return "must start with a letter (the Flink operator's name rule, DefaultValidator.validateDeploymentName)"
	}
	return ""
}

// ValidateGenerateName: a generateName prefix may end in '-' or '.'; the
// API server appends 5 random characters and validates the result as a
// name (apimachinery's ValidateObjectMeta with its name generator).
func ValidateGenerateName(s string) string {
	if s == "" {
		return "must not be empty"
	}
	return mustBe("DNS-1123 subdomain prefix", validation.IsDNS1123Subdomain(strings.TrimRight(s, "-.")+"x"))
}

// ValidateLabelKey: label keys are qualified names (optional DNS prefix/,
// then a name of at most 63 characters).
func ValidateLabelKey(k string) string { return joinErrs(validation.IsQualifiedName(k)) }

// ValidateLabelValue: label values are at most 63 characters of
// alphanumerics, '-', '_' and '.', starting and ending alphanumeric.
func ValidateLabelValue(v string) string { return joinErrs(validation.IsValidLabelValue(v)) }

// IRSAAnnotation is the annotation EKS reads to inject web identity
// credentials (EKS User Guide, "Assign IAM roles to Kubernetes service accounts").
const IRSAAnnotation = "eks.amazonaws.com/role-arn"

// ValidateAnnotationKey: annotation keys are qualified names, checked
// lower-cased as the API server does (apimachinery's ValidateAnnotations).
// The IRSA annotation is set through irsa_role_arn only, so the role and
// the annotation cannot disagree.
func ValidateAnnotationKey(k string) string {
	if k == IRSAAnnotation {
		return "is set by irsa_role_arn: set irsa_role_arn instead, so the role and the annotation cannot disagree"
	}
	return joinErrs(validation.IsQualifiedName(strings.ToLower(k)))
}
