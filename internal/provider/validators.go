package provider

import (
	"context"
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/iampolicy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// The schema's checks are the domain packages' checks: each is a
// func(string) string saying what is wrong ("" when fine), declared once
// next to the rule it encodes, and turned into a validator here.

// check adapts a domain check to a validator.String. summary names what is
// invalid ("Invalid bucket name"); the detail is the attribute path, the
// value and the check's sentence, which says what to do.
func check(summary, description string, fn func(string) string) validator.String {
	return stringCheck{summary: summary, description: description, fn: fn}
}

type stringCheck struct {
	summary, description string
	fn                   func(string) string
}

func (v stringCheck) Description(context.Context) string             { return v.description }
func (v stringCheck) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (v stringCheck) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if msg := v.fn(req.ConfigValue.ValueString()); msg != "" {
		resp.Diagnostics.AddAttributeError(req.Path, v.summary,
			fmt.Sprintf("%s %q %s.", req.Path, req.ConfigValue.ValueString(), msg))
	}
}

// mapKeysCheck applies a check to every key of a map attribute; the
// diagnostic is on the key (path.AtMapKey).
func mapKeysCheck(summary, description string, fn func(string) string) validator.Map {
	return mapCheck{summary: summary, description: description, key: fn}
}

// mapEntriesCheck applies a check to every key and value of a map of strings.
func mapEntriesCheck(summary, description string, key, value func(string) string) validator.Map {
	return mapCheck{summary: summary, description: description, key: key, value: value}
}

type mapCheck struct {
	summary, description string
	key, value           func(string) string
}

func (v mapCheck) Description(context.Context) string             { return v.description }
func (v mapCheck) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (v mapCheck) ValidateMap(_ context.Context, req validator.MapRequest, resp *validator.MapResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	elems := req.ConfigValue.Elements()
	keys := make([]string, 0, len(elems))
	for k := range elems {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := req.Path.AtMapKey(k)
		if v.key != nil {
			if msg := v.key(k); msg != "" {
				resp.Diagnostics.AddAttributeError(p, v.summary, fmt.Sprintf("%s: the key %q %s.", req.Path, k, msg))
				continue
			}
		}
		if v.value == nil {
			continue
		}
		s, ok := elems[k].(interface {
			IsNull() bool
			IsUnknown() bool
			ValueString() string
		})
		if !ok || s.IsNull() || s.IsUnknown() {
			continue
		}
		if msg := v.value(s.ValueString()); msg != "" {
			resp.Diagnostics.AddAttributeError(p, v.summary, fmt.Sprintf("%s: the value of %q %s.", req.Path, k, msg))
		}
	}
}

// The validators of the schemas, one per concept.
var (
	bucketNameCheck   = check("Invalid bucket name", "must follow S3 general purpose bucket naming rules", store.ValidateBucketName)
	s3DirCheck        = check("Invalid S3 directory", "an s3:// or s3a:// directory", store.ValidateDir)
	s3PathCheck       = check("Invalid S3 path", "an s3:// or s3a:// path", store.ValidatePath)
	restorePathCheck  = check("Invalid restore path", "a non-empty s3:// or s3a:// path of a savepoint or completed checkpoint", checkpoint.ValidateRestorePath)
	prefixCheck       = check("Invalid prefix", "a key prefix without leading or trailing slash, empty segments, . or .. segments, or wildcards", store.ValidatePrefix)
	storeIDCheck      = check("Invalid state store ID", "a state store ID of the form bucket/prefix", store.ValidateID)
	oidcARNCheck      = check("Invalid OIDC provider ARN", "an IAM OIDC provider ARN", iampolicy.ValidateOIDCProviderARN)
	roleARNCheck      = check("Invalid IAM role ARN", "an IAM role ARN", iampolicy.ValidateRoleARN)
	kmsKeyARNCheck    = check("Invalid KMS key ARN", "a KMS key ARN", iampolicy.ValidateKMSKeyARN)
	roleNameCheck     = check("Invalid IAM role name", "an IAM role name", iampolicy.ValidateRoleName)
	clusterNameCheck  = check("Invalid EKS cluster name", "an EKS cluster name", iampolicy.ValidateEKSClusterName)
	memoryCheck       = check("Invalid memory size", "a memory size the operator reads, such as 2048m, 2g or 2Gi (no decimals)", flinkconf.ValidateMemory)
	durationCheck     = check("Invalid duration", "a Flink duration such as 60s or 10 min", flinkconf.ValidateDuration)
	flinkVersionCheck = check("Unsupported Flink version", "a released Flink version the provider writes the keys of", flinkconf.ValidateVersion)
	localDirCheck     = check("Invalid local directory", "an absolute path that is not a system directory", flinkconf.ValidateLocalDir)
	podTemplateCheck  = check("Invalid pod template", "a Pod in YAML whose fields have the Pod's types", flinkconf.ValidatePodTemplate)
	imageCheck        = check("Invalid image", "a container image reference", flinkconf.ValidateImage)
	notBlankCheck     = check("Empty value", "a non-empty value", flinkconf.ValidateNotBlank)
	namespaceCheck    = check("Invalid namespace", "a DNS-1123 label", kube.ValidateNamespace)
	objectNameCheck   = check("Invalid name", "a DNS-1123 subdomain", kube.ValidateObjectName)
	namePrefixCheck   = check("Invalid name prefix", "a generateName prefix", kube.ValidateGenerateName)
	jobIDCheck        = check("Invalid job ID", "a Flink JobID: 32 lowercase hexadecimal characters", checkpoint.ValidateJobID)
	accountIDCheck    = check("Invalid AWS account ID", "a 12-digit AWS account ID", iampolicy.ValidateAccountID)
	endpointCheck     = check("Invalid URL", "an absolute http:// or https:// URL", awsclient.ValidateEndpoint)
	roleDurationCheck = check("Invalid duration", "a duration such as 1h, between 15m and 12h", awsclient.ValidateRoleDuration)
	hostCheck         = check("Invalid URL", "an absolute http:// or https:// URL", kube.ValidateHost)
	proxyURLCheck     = check("Invalid proxy URL", "an http://, https:// or socks5:// URL", kube.ValidateProxyURL)

	flinkConfigurationCheck = mapKeysCheck("Key not allowed in flink_configuration",
		"no key the provider manages (under any alias) and no static AWS credentials", flinkconf.ValidateExtraKey)
	awsTagsCheck = mapEntriesCheck("Invalid tag", "AWS tag keys and values",
		iampolicy.ValidateTagKey, iampolicy.ValidateTagValue)
	labelsCheck = mapEntriesCheck("Invalid label", "Kubernetes label keys and values",
		kube.ValidateLabelKey, kube.ValidateLabelValue)
	annotationsCheck = mapKeysCheck("Invalid annotation", "Kubernetes annotation keys", kube.ValidateAnnotationKey)
)

var (
	kmsKeyOrAliasARNCheck = check("Invalid KMS key ARN", "a KMS key or alias ARN", iampolicy.ValidateKMSKeyOrAliasARN)
	deploymentNameCheck   = check("Invalid name", "a DNS-1123 label of at most 45 characters", kube.ValidateDeploymentName)
)
