package flinkconf

import (
	"reflect"
	"strings"
	"testing"
)

// A key in both maps is an error on it; a secret only in
// flink_configuration a warning on it; other keys nothing.
func TestSensitiveKeys(t *testing.T) {
	plain := map[string]int{"s3.secret-key": 0, "fs.s3a.secret.key": 0, "parallelism.default": 0, "password.file": 0}
	fs := SensitiveKeys(plain, map[string]bool{"s3.secret-key": true})
	var got []string
	for _, f := range fs {
		got = append(got, f.Summary+" "+strings.Join(f.Path, "|"))
	}
	want := []string{"Secret shown in plans flink_configuration|fs.s3a.secret.key", "Secret shown in plans flink_configuration|password.file",
		"Key set twice flink_configuration|s3.secret-key"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if fs[2].Severity != Error || fs[0].Severity != Warning {
		t.Errorf("severities %v %v", fs[2].Severity, fs[0].Severity)
	}
	if !strings.HasPrefix(fs[2].Detail, `"s3.secret-key" is in both flink_configuration and sensitive_flink_configuration`) ||
		!strings.HasPrefix(fs[0].Detail, `Flink treats "fs.s3a.secret.key" as a secret`) {
		t.Errorf("details %q / %q", fs[2].Detail, fs[0].Detail)
	}
	if fs := SensitiveKeys(map[string]int{"parallelism.default": 0}, map[string]int(nil)); fs != nil {
		t.Errorf("no secret: %+v", fs)
	}
}
