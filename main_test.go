package main

import (
	"reflect"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"
)

func TestQuietSDKLogs(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want map[string]string
	}{
		{"nothing set: SDK loggers off", map[string]string{},
			map[string]string{"TF_LOG_SDK": "off", "TF_LOG_SDK_PROTO": "off", "TF_LOG_SDK_FRAMEWORK": "off"}},
		{"TF_LOG set: terraform shows provider logs, untouched", map[string]string{"TF_LOG": "TRACE"},
			map[string]string{"TF_LOG": "TRACE"}},
		{"TF_LOG_PROVIDER set: untouched", map[string]string{"TF_LOG_PROVIDER": "DEBUG"},
			map[string]string{"TF_LOG_PROVIDER": "DEBUG"}},
		{"empty TF_LOG counts as unset", map[string]string{"TF_LOG": ""},
			map[string]string{"TF_LOG": "", "TF_LOG_SDK": "off", "TF_LOG_SDK_PROTO": "off", "TF_LOG_SDK_FRAMEWORK": "off"}},
		{"an explicit SDK level is kept", map[string]string{"TF_LOG_SDK_PROTO": "DEBUG"},
			map[string]string{"TF_LOG_SDK": "off", "TF_LOG_SDK_PROTO": "DEBUG", "TF_LOG_SDK_FRAMEWORK": "off"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range tc.env {
				env[k] = v
			}
			quietSDKLogs(func(k string) (string, bool) { v, ok := env[k]; return v, ok },
				func(k, v string) error { env[k] = v; return nil })
			if !reflect.DeepEqual(env, tc.want) {
				t.Errorf("env = %v, want %v", env, tc.want)
			}
		})
	}
}

func TestSourceResolvesToFullAddress(t *testing.T) {
	// The address terraform uses for `source = "flinkstate/flinkstate"`:
	// host/namespace/type, as providerserver requires.
	addr, err := tfaddr.ParseProviderSource(source)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(addr.String(), "/")
	if len(parts) != 3 || parts[0] != tfaddr.DefaultProviderRegistryHost.String() || parts[1] != "flinkstate" || parts[2] != "flinkstate" {
		t.Errorf("address = %q", addr.String())
	}
}

// -debug prints one TF_REATTACH_PROVIDERS entry per CLI: terraform matches
// the address with its default registry host, OpenTofu with its own.
func TestDebugAddresses(t *testing.T) {
	addr, err := tfaddr.ParseProviderSource(source)
	if err != nil {
		t.Fatal(err)
	}
	got := debugAddresses(addr)
	want := []string{
		tfaddr.DefaultProviderRegistryHost.String() + "/flinkstate/flinkstate",
		"registry." + "opentofu.org/flinkstate/flinkstate",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("debug addresses %v, want %v", got, want)
	}
}
