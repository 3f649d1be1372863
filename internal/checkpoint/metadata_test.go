package checkpoint

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fixtures under testdata/ are real: _metadata files Flink 2.2.1 wrote
// in the test bed, with the objects beside them when they were recorded
// (objects.txt). Regenerate them with
//
//	FLINKSTATE_REGENERATE_FIXTURES=1 TF_ACC=1 go test -count=1 -run TestRealFlink_recordMetadataFixtures ./internal/testbed/
var metadataFixtures = []string{"incremental-rocksdb-checkpoint", "canonical-savepoint", "native-savepoint"}

func readFixture(t *testing.T, name string) (meta []byte, objects []string) {
	t.Helper()
	meta, err := os.ReadFile(filepath.Join("testdata", name, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	list, err := os.ReadFile(filepath.Join("testdata", name, "objects.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(list), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			// "<key relative to the listed directory> <size>": the key is
			// everything before the last space ("" for the directory's own
			// marker, listed as " 0").
			objects = append(objects, l[:strings.LastIndex(l, " ")])
		}
	}
	return meta, objects
}

func TestReadMetadataHeader_realFlink(t *testing.T) {
	for _, name := range metadataFixtures {
		t.Run(name, func(t *testing.T) {
			meta, _ := readFixture(t, name)
			h, err := ReadMetadataHeader(bytes.NewReader(meta))
			if err != nil {
				t.Fatal(err)
			}
			if h.Version != 6 {
				t.Errorf("version %d; Flink 2.2 writes 6 (MetadataV6Serializer)", h.Version)
			}
		})
	}
}

// What the fixtures are for: an incremental checkpoint's metadata names
// files under its job's shared/ directory (written by earlier checkpoints
// too), and a savepoint's names files of its own directory.
func TestMetadataFixtures_referenceTheirFiles(t *testing.T) {
	for _, tc := range []struct{ name, under string }{
		{"incremental-rocksdb-checkpoint", "shared/"},
		{"canonical-savepoint", ""},
		{"native-savepoint", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta, objects := readFixture(t, tc.name)
			found := 0
			for _, o := range objects {
				base := o[strings.LastIndex(o, "/")+1:]
				if !strings.HasPrefix(o, tc.under) || base == "_metadata" || base == "" {
					continue
				}
				if bytes.Contains(meta, []byte(base)) {
					found++
				}
			}
			if found == 0 {
				t.Errorf("the _metadata names none of the %d objects recorded under %q beside it", len(objects), tc.under)
			}
		})
	}
}

func TestReadMetadataHeader_failsClosed(t *testing.T) {
	header := func(magic uint32, version int32) []byte {
		b := make([]byte, 8)
		binary.BigEndian.PutUint32(b, magic)
		binary.BigEndian.PutUint32(b[4:], uint32(version))
		return b
	}
	for name, tc := range map[string]struct {
		in   []byte
		want string
	}{
		"empty (an interrupted write)": {nil, "shorter than its 8-byte header"},
		"short":                        {[]byte{0x49, 0x60, 0x67}, "shorter than its 8-byte header"},
		"another file":                 {[]byte("PK\x03\x04zipfile"), "starts with 0x504b0304"},
		"future version":               {header(MetadataMagic, 7), "version 7 is unknown"},
		"version zero":                 {header(MetadataMagic, 0), "version 0 is unknown"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadMetadataHeader(bytes.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one saying %q", err, tc.want)
			}
		})
	}
}
