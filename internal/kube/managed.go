package kube

import (
	"encoding/json"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OwnedKeys are the metadata label and annotation keys one field manager
// owns through server-side apply.
type OwnedKeys struct {
	Labels      map[string]bool
	Annotations map[string]bool
}

// OwnedMetadataKeys reads managedFields: which labels and annotations the
// given manager applied. Reading back only those keeps keys written by the
// operator, admission webhooks or kubectl out of Terraform's diff.
func OwnedMetadataKeys(entries []metav1.ManagedFieldsEntry, manager string) OwnedKeys {
	out := OwnedKeys{Labels: map[string]bool{}, Annotations: map[string]bool{}}
	for _, e := range entries {
		if e.Manager != manager || e.Operation != metav1.ManagedFieldsOperationApply || e.FieldsV1 == nil {
			continue
		}
		var fields struct {
			Metadata struct {
				Labels      map[string]json.RawMessage `json:"f:labels"`
				Annotations map[string]json.RawMessage `json:"f:annotations"`
			} `json:"f:metadata"`
		}
		if json.Unmarshal(e.FieldsV1.Raw, &fields) != nil {
			continue
		}
		for k := range fields.Metadata.Labels {
			if key, ok := strings.CutPrefix(k, "f:"); ok {
				out.Labels[key] = true
			}
		}
		for k := range fields.Metadata.Annotations {
			if key, ok := strings.CutPrefix(k, "f:"); ok {
				out.Annotations[key] = true
			}
		}
	}
	return out
}
