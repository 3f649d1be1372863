package kube

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// FinalStopSource is what a final stop of obj's job starts from
// (suspendedWithSavepoint): ok false when no final savepoint can be had;
// existing the savepoint a suspend took already ("": the running job is
// stopped with one). flinkdeploy.MoveFacts.StoppedWith decides the same at
// plan, from the status read then (a test there checks they agree).
func FinalStopSource(obj *unstructured.Unstructured) (existing string, ok bool) {
	return suspendedWithSavepoint(obj)
}
