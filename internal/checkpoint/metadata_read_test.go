package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fixture is one of testdata/'s real snapshots, with its objects.txt read:
// where the snapshot was (snapshot) and which objects were under listed
// then (keys relative to listed, with their sizes). BUCKET in objects.txt
// is replaced by the bucket the recording ran against.
type fixture struct {
	name     string
	meta     []byte
	snapshot string // s3://bucket/.../chk-N or .../savepoint-...
	listed   string // s3://bucket/.../ (the directory objects.txt lists)
	objects  map[string]int64
}

// recordedBucket is the bucket the fixtures were recorded in: the
// checkpoint's _metadata names its shared files by absolute URI, and the
// savepoints' inline handles' names carry it too. objects.txt writes BUCKET.
var recordedBucket = sync.OnceValues(func() (string, error) {
	b, err := os.ReadFile(filepath.Join("testdata", "incremental-rocksdb-checkpoint", "_metadata"))
	if err != nil {
		return "", err
	}
	m, err := ReadMetadata(bytes.NewReader(b), "")
	if err != nil {
		return "", err
	}
	if len(m.Files) == 0 {
		return "", errors.New("the checkpoint fixture references no file")
	}
	bucket, _, err := ParseS3URI(m.Files[0].URI)
	return bucket, err
})

func loadFixture(t testing.TB, name string) fixture {
	t.Helper()
	bucket, err := recordedBucket()
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{name: name, objects: map[string]int64{}}
	if f.meta, err = os.ReadFile(filepath.Join("testdata", name, "_metadata")); err != nil {
		t.Fatal(err)
	}
	list, err := os.ReadFile(filepath.Join("testdata", name, "objects.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(list), "\n") {
		switch {
		case l == "":
		case strings.HasPrefix(l, "# snapshot: "):
			f.snapshot = strings.Replace(strings.TrimPrefix(l, "# snapshot: "), "BUCKET", bucket, 1)
		case strings.HasPrefix(l, "# objects under "):
			f.listed = strings.Replace(strings.TrimSuffix(strings.TrimPrefix(l, "# objects under "), " then:"), "BUCKET", bucket, 1)
		case strings.HasPrefix(l, "#"):
		default:
			i := strings.LastIndex(l, " ")
			size, err := strconv.ParseInt(l[i+1:], 10, 64)
			if err != nil {
				t.Fatalf("objects.txt line %q: %v", l, err)
			}
			f.objects[l[:i]] = size
		}
	}
	if f.snapshot == "" || !strings.HasSuffix(f.listed, "/") || !strings.HasPrefix(f.snapshot+"/", f.listed) {
		t.Fatalf("objects.txt of %s: snapshot %q, listed %q", name, f.snapshot, f.listed)
	}
	return f
}

func (f fixture) read(t testing.TB) *Metadata {
	t.Helper()
	m, err := ReadMetadata(bytes.NewReader(f.meta), f.snapshot+"/_metadata")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// What Flink 2.2.1 wrote: counted by hand from the fixtures' bytes and the
// job (source -> keyed counter -> print sink, parallelism 1, RocksDB).
func TestReadMetadata_realFlinkCounts(t *testing.T) {
	for _, tc := range []struct {
		name             string
		checkpointID     int64
		files            map[FileKind]int
		inline           int
		keyedHandleClass string
	}{
		// Incremental: the small .sst files are inline (under
		// state.storage.fs.memory-threshold), the OPTIONS file is a private
		// file under shared/.
		{"incremental-rocksdb-checkpoint", 3, map[FileKind]int{FilePrivate: 1}, 11, "IncrementalRemoteKeyedStateHandle"},
		// Canonical savepoint: one key-groups file of its own.
		{"canonical-savepoint", 4, map[FileKind]int{FileRelative: 1}, 2, "KeyGroupsSavepointStateHandle"},
		// Native savepoint: the RocksDB files copied into its directory.
		{"native-savepoint", 6, map[FileKind]int{FileRelative: 2}, 8, "IncrementalRemoteKeyedStateHandle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := loadFixture(t, tc.name).read(t)
			if m.Version != 6 || m.CheckpointID != tc.checkpointID || m.MasterStates != 0 {
				t.Errorf("version %d, checkpoint %d, %d master states; want 6, %d, 0", m.Version, m.CheckpointID, m.MasterStates, tc.checkpointID)
			}
			kinds := map[FileKind]int{}
			for _, f := range m.Files {
				kinds[f.Kind]++
			}
			if len(kinds) != len(tc.files) {
				t.Errorf("files by kind %v, want %v", kinds, tc.files)
			}
			for k, n := range tc.files {
				if kinds[k] != n {
					t.Errorf("files by kind %v, want %v", kinds, tc.files)
				}
			}
			if m.InlineHandles != tc.inline || m.Handles["ByteStreamStateHandle"] != tc.inline {
				t.Errorf("%d inline handles (%d counted), want %d", m.InlineHandles, m.Handles["ByteStreamStateHandle"], tc.inline)
			}
			if m.Handles[tc.keyedHandleClass] != 1 || m.Handles["OperatorStreamStateHandle"] != 1 {
				t.Errorf("handles %v: want one %s and one OperatorStreamStateHandle (the source's split state)", m.Handles, tc.keyedHandleClass)
			}
			if m.PropertiesSize == 0 {
				t.Error("no CheckpointProperties after the operator states")
			}
		})
	}
}

func TestReadMetadata_realFlinkOperators(t *testing.T) {
	want := []OperatorState{
		{ID: "4e1fa7f1daef7532e6d29e9a5d40d939", Name: "Sink: Print to Std. Out", UID: "print", Parallelism: 1, MaxParallelism: 128, Subtasks: []SubtaskState{{Index: 0}}},
		{ID: "b71731f1c0df9c3076c4a455334d0ad6", Name: "KeyedProcess", UID: "count", Parallelism: 1, MaxParallelism: 128, Subtasks: []SubtaskState{{Index: 0}}},
		{ID: "8e438e001276993a86ff80dcf02e0237", Name: "Source: sequence", UID: "sequence", Parallelism: 1, MaxParallelism: 128, Subtasks: []SubtaskState{{Index: 0}}},
	}
	for _, name := range metadataFixtures {
		t.Run(name, func(t *testing.T) {
			m := loadFixture(t, name).read(t)
			if len(m.Operators) != len(want) {
				t.Fatalf("%d operators, want %d", len(m.Operators), len(want))
			}
			for i, o := range m.Operators {
				w := want[i]
				if o.ID != w.ID || o.Name != w.Name || o.UID != w.UID || o.Parallelism != w.Parallelism ||
					o.MaxParallelism != w.MaxParallelism || o.FullyFinished || len(o.Subtasks) != 1 || o.Subtasks[0].Index != 0 || o.Subtasks[0].Finished {
					t.Errorf("operator %d: %+v, want %+v", i, o, w)
				}
			}
			// Only the keyed counter has files; every file says who holds it.
			for _, f := range m.Files {
				if f.Operator != want[1].ID || f.Subtask != 0 || f.State != "managed-keyed" {
					t.Errorf("file %s held by operator %s subtask %d %s state; want the counter's managed keyed state", f.URI, f.Operator, f.Subtask, f.State)
				}
			}
			if got := m.Operators[1].Subtasks[0].Files; got != len(m.Files) {
				t.Errorf("the counter's subtask counts %d files, the metadata %d", got, len(m.Files))
			}
		})
	}
}

// Every file a snapshot references was there when it was recorded.
func TestReadMetadata_realFlinkFilesExist(t *testing.T) {
	for _, name := range metadataFixtures {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, name)
			m := f.read(t)
			for _, file := range m.Files {
				rel, ok := strings.CutPrefix(file.URI, f.listed)
				if !ok {
					t.Errorf("%s is outside %s", file.URI, f.listed)
					continue
				}
				size, ok := f.objects[rel]
				if !ok {
					t.Errorf("%s (%s) is not among the recorded objects", file.URI, file.Kind)
				} else if size != file.StateSize {
					t.Errorf("%s: state size %d, object size %d", file.URI, file.StateSize, size)
				}
			}
		})
	}
}

// Nothing recorded beside a snapshot is left unreferenced, but _metadata
// and directory markers.
func TestReadMetadata_realFlinkNoUnreferencedObjects(t *testing.T) {
	for _, name := range metadataFixtures {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, name)
			referenced := map[string]bool{}
			for _, u := range f.read(t).FileURIs() {
				referenced[u] = true
			}
			for rel := range f.objects {
				if rel == "" || strings.HasSuffix(rel, "/") || rel == MetadataFile || strings.HasSuffix(rel, "/"+MetadataFile) {
					continue
				}
				if !referenced[f.listed+rel] {
					t.Errorf("%s%s is referenced by nothing in the _metadata", f.listed, rel)
				}
			}
		})
	}
}

// The point of the checkpoint fixture: it references its job's shared/.
func TestReadMetadata_incrementalReferencesSharedDir(t *testing.T) {
	f := loadFixture(t, "incremental-rocksdb-checkpoint")
	got := f.read(t).FileURIs()
	want := []string{f.listed + "shared/635450c3-59b5-4a4b-8e33-cb642e9dbc67"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("files %v, want %v", got, want)
	}
}

// Relative paths resolve against the _metadata's directory, however the
// snapshot is named (RelativeFileStateHandle, DeserializationContext).
func TestReadMetadata_relativeResolution(t *testing.T) {
	f := loadFixture(t, "native-savepoint")
	for _, uri := range []string{f.snapshot, f.snapshot + "/", f.snapshot + "/_metadata"} {
		m, err := ReadMetadata(bytes.NewReader(f.meta), uri)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range m.Files {
			if file.URI != f.snapshot+"/"+file.Path || strings.Contains(file.Path, "/") {
				t.Errorf("given %s: %s resolved to %s", uri, file.Path, file.URI)
			}
		}
	}
	if _, err := ReadMetadata(bytes.NewReader(f.meta), ""); err == nil || !strings.Contains(err.Error(), "no metadata URI") {
		t.Errorf("relative handles without a URI: %v, want a refusal", err)
	}
}

// Every truncation of a real file is refused, with the offset it ends at.
func TestReadMetadata_truncationsRefused(t *testing.T) {
	for _, name := range metadataFixtures {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, name)
			step := 1
			if len(f.meta) > 4000 {
				step = 7 // every byte of the large ones costs seconds for nothing
			}
			for n := 0; n < len(f.meta); n += step {
				_, err := ReadMetadata(bytes.NewReader(f.meta[:n]), f.snapshot)
				var me *MetadataError
				if !errors.As(err, &me) {
					t.Fatalf("cut at %d: %v, want a *MetadataError", n, err)
				}
				if me.Offset > int64(n) {
					t.Fatalf("cut at %d: error at offset %d, past the end: %v", n, me.Offset, err)
				}
			}
		})
	}
}

// mdw writes metadata as Flink's DataOutputStream does, for synthetic files.
type mdw struct{ bytes.Buffer }

func (w *mdw) u8(v ...byte) *mdw { w.Write(v); return w }
func (w *mdw) i32(v int32) *mdw  { w.Write(binary.BigEndian.AppendUint32(nil, uint32(v))); return w }
func (w *mdw) i64(v int64) *mdw  { w.Write(binary.BigEndian.AppendUint64(nil, uint64(v))); return w }
func (w *mdw) utf(s string) *mdw {
	w.Write(binary.BigEndian.AppendUint16(nil, uint16(len(s))))
	w.WriteString(s)
	return w
}
func (w *mdw) raw(b []byte) *mdw { w.Write(b); return w }

// Handle builders (MetadataV2V3SerializerBase.serializeStreamStateHandle).
func fileHandle(w *mdw, size int64, path string) { w.u8(2).i64(size).utf(path) }
func relHandle(w *mdw, rel string, size int64)   { w.u8(6).utf(rel).i64(size) }
func inlineHandle(w *mdw, data string) {
	w.u8(1).utf("inline-" + data).i32(int32(len(data))).raw([]byte(data))
}
func segmentHandle(w *mdw, start, size int64, scope int32, path string) {
	w.u8(15).i64(start).i64(size).i32(scope).utf(path).utf("logical-1")
}

// properties is a real MetadataV4Serializer.serializeProperties output:
// the canonical savepoint's.
func properties() []byte {
	b, err := os.ReadFile(filepath.Join("testdata", "canonical-savepoint", "_metadata"))
	if err != nil {
		panic(err)
	}
	m, err := ReadMetadata(bytes.NewReader(b), "s3://b/sp")
	if err != nil {
		panic(err)
	}
	return b[len(b)-m.PropertiesSize:]
}

// synthetic builds a file of the given version with one operator
// (parallelism 3: subtask 0 with state, subtask 2 finished, subtask 1
// absent) exercising every file-bearing handle the version has;
// keyed/channel let a test swap in its own bytes.
func synthetic(version int32, keyed func(w *mdw)) []byte {
	w := &mdw{}
	w.i32(MetadataMagic).i32(version).i64(42)
	// one master state: magic, length, then version, name, payload
	ms := &mdw{}
	ms.i32(1).utf("hook").i32(3).raw([]byte("abc"))
	masterMagic := uint32(0xc96b1696)
	w.i32(1).i32(int32(masterMagic)).i32(int32(ms.Len())).raw(ms.Bytes())
	w.i32(1) // one operator
	if version >= 5 {
		w.utf("op").utf("uid-1")
	}
	w.i64(0x0102030405060708).i64(0x1112131415161718).i32(3).i32(128)
	if version == 2 {
		w.i32(1) // chain length
	} else {
		inlineHandle(w, "coord")
	}
	if version == 2 {
		w.i32(1).i32(0) // subtask 0
		w.i64(-1).i32(0)
	} else {
		w.i32(2).i32(0) // two subtasks; subtask 0
	}
	// managed operator state: a PARTITIONABLE_OPERATOR_STATE_HANDLE with
	// one split state and two offsets, delegate a file
	w.i32(1).u8(4).i32(1).utf("splits").u8(0).i32(2).i64(0).i64(10)
	fileHandle(w, 100, "s3://b/cp/job/chk-7/op-file")
	w.i32(0) // no raw operator state
	keyed(w)
	w.u8(0) // no raw keyed state
	if version >= 3 {
		w.i32(1) // one input channel handle
		if version >= 6 {
			w.u8(1)
		}
		w.i32(0).i32(0).i32(1).i32(1).i64(0).i64(5)
		fileHandle(w, 5, "s3://b/cp/job/chk-7/channel")
		w.i32(0)  // no output channel handles
		w.i32(-3) // subtask 2, finished
	}
	if version >= 4 {
		w.raw(properties())
	}
	return w.Bytes()
}

// incrementalV2 is an INCREMENTAL_KEY_GROUPS_HANDLE_V2 with a meta file,
// a shared file, a shared segment, a private relative file, an inline one.
func incrementalV2(w *mdw) {
	w.u8(11).i64(7).utf("backend").i32(0).i32(128).i64(999)
	fileHandle(w, 10, "s3://b/cp/job/chk-7/meta")
	w.i32(2)
	w.utf("000001.sst")
	fileHandle(w, 20, "s3://b/cp/job/shared/sst-1")
	w.utf("000002.sst")
	segmentHandle(w, 64, 30, 1, "s3://b/cp/job/shared/merged-1")
	w.i32(2)
	w.utf("MANIFEST")
	relHandle(w, "manifest-file", 40)
	w.utf("CURRENT")
	inlineHandle(w, "cur")
	w.utf("handle-id")
}

func TestReadMetadata_syntheticVersions(t *testing.T) {
	for _, v := range []int32{2, 3, 4, 5, 6} {
		t.Run("v"+strconv.Itoa(int(v)), func(t *testing.T) {
			m, err := ReadMetadata(bytes.NewReader(synthetic(v, incrementalV2)), "s3://b/sp/savepoint-1/_metadata")
			if err != nil {
				t.Fatal(err)
			}
			want := []FileRef{
				{URI: "s3://b/cp/job/chk-7/op-file", Kind: FileExclusive, StateSize: 100, State: "managed-operator"},
				{URI: "s3://b/cp/job/chk-7/meta", Kind: FileExclusive, StateSize: 10, State: "managed-keyed"},
				{URI: "s3://b/cp/job/shared/sst-1", Kind: FileShared, StateSize: 20, State: "managed-keyed", LocalPath: "000001.sst"},
				{URI: "s3://b/cp/job/shared/merged-1", Kind: FileSegment, StateSize: 30, SegmentOffset: 64, SegmentScope: "SHARED", State: "managed-keyed", LocalPath: "000002.sst"},
				{URI: "s3://b/sp/savepoint-1/manifest-file", Kind: FileRelative, StateSize: 40, State: "managed-keyed", LocalPath: "MANIFEST"},
				{URI: "s3://b/cp/job/chk-7/channel", Kind: FileExclusive, StateSize: 5, State: "input-channel"},
			}
			if v == 2 {
				want = want[:5] // no channel state before version 3
			}
			if len(m.Files) != len(want) {
				t.Fatalf("%d files %+v, want %d", len(m.Files), m.Files, len(want))
			}
			for i, f := range m.Files {
				w := want[i]
				if f.URI != w.URI || f.Kind != w.Kind || f.StateSize != w.StateSize || f.SegmentOffset != w.SegmentOffset ||
					f.SegmentScope != w.SegmentScope || f.State != w.State || f.LocalPath != w.LocalPath ||
					f.Operator != "01020304050607081112131415161718" || f.Subtask != 0 {
					t.Errorf("file %d: %+v, want %+v", i, f, w)
				}
			}
			if m.CheckpointID != 42 || m.MasterStates != 1 {
				t.Errorf("checkpoint %d, %d master states", m.CheckpointID, m.MasterStates)
			}
			op := m.Operators[0]
			if v >= 5 && (op.Name != "op" || op.UID != "uid-1") {
				t.Errorf("name %q uid %q", op.Name, op.UID)
			}
			wantSubtasks := []SubtaskState{{Index: 0, Files: len(want)}, {Index: 2, Finished: true}}
			if v == 2 {
				wantSubtasks = wantSubtasks[:1]
			}
			if len(op.Subtasks) != len(wantSubtasks) {
				t.Fatalf("subtasks %+v, want %+v", op.Subtasks, wantSubtasks)
			}
			for i := range wantSubtasks {
				if op.Subtasks[i] != wantSubtasks[i] {
					t.Errorf("subtasks %+v, want %+v", op.Subtasks, wantSubtasks)
				}
			}
			inline := 1 // CURRENT
			if v >= 3 {
				inline++ // the coordinator's state
			}
			if m.InlineHandles != inline {
				t.Errorf("%d inline handles, want %d", m.InlineHandles, inline)
			}
			if uris := m.FileURIs(); len(uris) != len(want) || !sort.StringsAreSorted(uris) {
				t.Errorf("FileURIs %v", uris)
			}
		})
	}
}

func TestReadMetadata_syntheticHandles(t *testing.T) {
	for name, tc := range map[string]struct {
		keyed func(w *mdw)
		want  []FileRef
	}{
		"key groups v2 with a file": {func(w *mdw) {
			w.u8(12).i32(0).i32(2).i64(0).i64(8)
			fileHandle(w, 16, "s3://b/kg")
			w.utf("id")
		}, []FileRef{{URI: "s3://b/kg", Kind: FileExclusive, StateSize: 16}}},
		"savepoint key groups, relative": {func(w *mdw) {
			w.u8(7).i32(5).i32(1).i64(0)
			relHandle(w, "f", 3)
		}, []FileRef{{URI: "s3://b/sp/f", Kind: FileRelative, StateSize: 3}}},
		"key groups stream handle nesting a file": {func(w *mdw) {
			w.u8(3).i32(0).i32(1).i64(0)
			w.u8(3).i32(0).i32(1).i64(0)
			fileHandle(w, 9, "s3://b/nested")
		}, []FileRef{{URI: "s3://b/nested", Kind: FileExclusive, StateSize: 9}}},
		"changelog with a materialized part and a file increment": {func(w *mdw) {
			w.u8(14).i32(0).i32(128).i64(77)
			w.i32(1)
			w.u8(12).i32(0).i32(0)
			fileHandle(w, 50, "s3://b/materialized")
			w.utf("m")
			w.i32(2)
			w.u8(13).i32(0).i32(128).i32(1).i64(0)
			fileHandle(w, 60, "s3://b/dstl/log-1")
			w.i64(60).i64(60).utf("c").utf("filesystem")
			w.u8(9).i32(0).i32(128).i64(1).i64(2).i32(1).i32(3).i32(2).raw([]byte("xy")).utf("b")
			w.i64(5).i64(6).utf("h")
		}, []FileRef{{URI: "s3://b/materialized", Kind: FileExclusive, StateSize: 50}, {URI: "s3://b/dstl/log-1", Kind: FileChangelog, StateSize: 60}}},
		"empty segment": {func(w *mdw) {
			w.u8(12).i32(0).i32(0).u8(16).utf("id")
		}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			m, err := ReadMetadata(bytes.NewReader(synthetic(6, tc.keyed)), "s3://b/sp")
			if err != nil {
				t.Fatal(err)
			}
			got := m.Files[1 : len(m.Files)-1] // without the operator and channel files
			if len(got) != len(tc.want) {
				t.Fatalf("files %+v, want %+v", got, tc.want)
			}
			for i, f := range got {
				if f.URI != tc.want[i].URI || f.Kind != tc.want[i].Kind || f.StateSize != tc.want[i].StateSize {
					t.Errorf("file %d: %+v, want %+v", i, f, tc.want[i])
				}
			}
		})
	}
}

func TestReadMetadata_failsClosed(t *testing.T) {
	v6 := func(keyed func(w *mdw)) []byte { return synthetic(6, keyed) }
	fine := v6(incrementalV2)
	header := func(version int32) []byte {
		return (&mdw{}).i32(MetadataMagic).i32(version).i64(1).i32(0).i32(0).Bytes()
	}
	patch := func(b []byte, at int, v ...byte) []byte {
		c := bytes.Clone(b)
		copy(c[at:], v)
		return c
	}
	opCount := 8 + 8 + 4 + 4 + 4 + 4 + 2 + 4 + 4 + 3 // header, ID, 1 master state (14 bytes inside)
	for name, tc := range map[string]struct {
		in     []byte
		want   string
		offset int64 // -1: any
	}{
		"another file":            {[]byte("PK\x03\x04zipfile"), "not checkpoint metadata", 0},
		"version 1":               {header(1), "version 1 not supported", 4},
		"version 7":               {header(7), "version 7 not supported", 4},
		"negative checkpoint":     {patch(header(3), 8, 0xff), "invalid checkpoint ID", 8},
		"absurd operator count":   {patch(fine, opCount, 0x7f, 0xff, 0xff, 0xff), "the number of operator states is 2147483647, but only", int64(opCount)},
		"negative operator count": {patch(fine, opCount, 0xff), "negative", int64(opCount)},
		"trailing bytes in v3":    {append(synthetic(3, incrementalV2), 0), "1 bytes follow the operator states", -1},
		"v4 without properties":   {synthetic(4, incrementalV2)[:len(synthetic(4, incrementalV2))-len(properties())], "Java-serialized CheckpointProperties", -1},
		"unknown keyed handle":    {v6(func(w *mdw) { w.u8(99) }), "unknown keyed state handle type 99", -1},
		"unknown stream handle":   {v6(func(w *mdw) { w.u8(12).i32(0).i32(0).u8(42) }), "unknown stream state handle type 42", -1},
		"placeholder-like type":   {v6(func(w *mdw) { w.u8(12).i32(0).i32(0).u8(255) }), "unknown stream state handle type 255", -1},
		"huge inline length":      {v6(func(w *mdw) { w.u8(12).i32(0).i32(0).u8(1).utf("n").i32(0x7fffffff) }), "the inline state length is 2147483647, but only", -1},
		"huge key group count":    {v6(func(w *mdw) { w.u8(12).i32(0).i32(0x7fffffff) }), "key group offsets", -1},
		"negative key groups":     {v6(func(w *mdw) { w.u8(12).i32(0).i32(-1) }), "key group range: first 0, count -1", -1},
		"relative dot-dot":        {v6(func(w *mdw) { w.u8(7).i32(0).i32(0); relHandle(w, "../other/f", 1) }), `relative path "../other/f"`, -1},
		"relative absolute":       {v6(func(w *mdw) { w.u8(7).i32(0).i32(0); relHandle(w, "/f", 1) }), "is absolute", -1},
		"bad modified UTF-8":      {v6(func(w *mdw) { w.u8(12).i32(0).i32(0).u8(2).i64(1).i16raw(2, 0xff, 0xfe) }), "not valid modified UTF-8", -1},
		"unknown segment scope":   {v6(func(w *mdw) { w.u8(12).i32(0).i32(0); segmentHandle(w, 0, 1, 2, "s3://b/x") }), "segment scope 2", -1},
		"changelog nested too deep": {v6(func(w *mdw) {
			for i := 0; i < 4; i++ {
				w.u8(14).i32(0).i32(0).i64(0).i32(1)
			}
		}), "nested more than", -1},
		"changelog delta not a changelog handle": {v6(func(w *mdw) { w.u8(14).i32(0).i32(0).i64(0).i32(0).i32(1).u8(12).i32(0).i32(0).u8(0).utf("x") }), "not a ChangelogStateHandle", -1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadMetadata(bytes.NewReader(tc.in), "s3://b/sp/_metadata")
			var me *MetadataError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want a *MetadataError saying %q", err, tc.want)
			}
			if tc.offset >= 0 && me.Offset != tc.offset {
				t.Errorf("offset %d, want %d: %v", me.Offset, tc.offset, err)
			}
		})
	}
}

func (w *mdw) i16raw(n uint16, b ...byte) *mdw {
	w.Write(binary.BigEndian.AppendUint16(nil, n))
	w.Write(b)
	return w
}

func TestReadMetadata_subtaskChecks(t *testing.T) {
	base := synthetic(6, func(w *mdw) { w.u8(0) })
	// The subtask count follows the coordinator's inline state, "coord".
	i := bytes.LastIndex(base, []byte("coord")) + len("coord")
	for name, tc := range map[string]struct {
		ints []int32
		want string
	}{
		"index beyond parallelism":  {[]int32{1, 3}, "subtask index 3 is outside [0, 3)"},
		"finished index beyond":     {[]int32{1, -5}, "subtask index -5 is outside [0, 3)"},
		"repeated index":            {[]int32{3, -1, -1}, "subtask 0 appears twice"},
		"finished with coordinator": {[]int32{-1}, "fully finished operator with coordinator state"},
	} {
		t.Run(name, func(t *testing.T) {
			w := &mdw{}
			w.raw(base[:i])
			for _, v := range tc.ints {
				w.i32(v)
			}
			w.raw(properties())
			_, err := ReadMetadata(bytes.NewReader(w.Bytes()), "s3://b/sp")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestDecodeModifiedUTF8(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want string
		bad  int
	}{
		{[]byte("plain/ascii"), "plain/ascii", -1},
		{[]byte{0xc0, 0x80}, "\x00", -1},                      // Java's NUL
		{[]byte{0xc3, 0xa9}, "é", -1},                         // 2 bytes
		{[]byte{0xe2, 0x82, 0xac}, "€", -1},                   // 3 bytes
		{[]byte{0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80}, "😀", -1}, // a surrogate pair
		{[]byte{0xed, 0xa0, 0xbd}, "", 0},                     // a lone high surrogate
		{[]byte{'a', 0xed, 0xb8, 0x80}, "", 1},                // a lone low surrogate
		{[]byte{'a', 0x80}, "", 1},                            // a stray continuation byte
		{[]byte{0xf0, 0x9f, 0x98, 0x80}, "", 0},               // standard 4-byte UTF-8: not Java's
		{[]byte{0xe2, 0x82}, "", 0},                           // cut short
	} {
		got, bad := decodeModifiedUTF8(tc.in)
		if got != tc.want || bad != tc.bad {
			t.Errorf("% x: %q, %d; want %q, %d", tc.in, got, bad, tc.want, tc.bad)
		}
	}
}

func TestReadMetadata_realFlinkProperties(t *testing.T) {
	for _, tc := range []struct {
		name string
		want CheckpointProperties
	}{
		{"incremental-rocksdb-checkpoint", CheckpointProperties{Type: "CheckpointType", Name: "Checkpoint", SharingFilesStrategy: "FORWARD_BACKWARD"}},
		{"canonical-savepoint", CheckpointProperties{Type: "SavepointType", Name: "Savepoint", SavepointFormat: "CANONICAL"}},
		{"native-savepoint", CheckpointProperties{Type: "SavepointType", Name: "Suspend Savepoint", SavepointFormat: "NATIVE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := loadFixture(t, tc.name).read(t)
			if m.Properties == nil || *m.Properties != tc.want {
				t.Errorf("properties %+v, want %+v", m.Properties, tc.want)
			}
			if m.Properties.IsSavepoint() != (tc.want.Type == "SavepointType") {
				t.Errorf("IsSavepoint %v", m.Properties.IsSavepoint())
			}
		})
	}
}

// The CheckpointProperties are walked to their end, as ObjectInputStream
// would read them: what it would refuse is refused.
func TestReadMetadata_propertiesFailClosed(t *testing.T) {
	f := loadFixture(t, "canonical-savepoint")
	props := f.meta[len(f.meta)-f.read(t).PropertiesSize:]
	head := f.meta[:len(f.meta)-len(props)]
	for name, tc := range map[string]struct {
		props []byte
		want  string
	}{
		"trailing byte":     {append(bytes.Clone(props), 0), "1 bytes follow the CheckpointProperties"},
		"cut in the middle": {props[:len(props)/2], "truncated"},
		"not Java":          {[]byte("{json}"), "Java-serialized CheckpointProperties"},
		"another class":     {bytes.Replace(props, []byte("CheckpointProperties"), []byte("CheckpointPropertiez"), 1), "not a CheckpointProperties"},
		"dangling handle":   {bytes.Replace(props, []byte{0x71, 0x00, 0x7e, 0x00, 0x09}, []byte{0x71, 0x00, 0x7e, 0x00, 0x7f}, 1), "handle 0x7e007f, which does not exist"},
		"exception marker":  {append(bytes.Clone(props[:4]), tcException), "type code 0x7b is not expected"},
		"superclass chain too long": {func() []byte {
			w := (&mdw{}).raw(props[:4]).u8(tcObject)
			for i := 0; i < 100; i++ { // a class descriptor whose super is the next
				w.u8(tcClassDesc).utf("C").i64(1).u8(scSerializable).u8(0, 0).u8(tcEndBlockData)
			}
			return w.u8(tcNull).Bytes()
		}(), "nested more than 32 deep"},
	} {
		t.Run(name, func(t *testing.T) {
			in := append(bytes.Clone(head), tc.props...)
			_, err := ReadMetadata(bytes.NewReader(in), f.snapshot)
			var me *MetadataError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want a *MetadataError saying %q", err, tc.want)
			}
			if me.Offset < int64(len(head)) {
				t.Errorf("offset %d, before the properties at %d", me.Offset, len(head))
			}
		})
	}
}

// Each operator's keyed handles: only the keyed counter (uid "count") has
// keyed state, of the class its snapshot type writes; the source (split
// state) and the sink have none.
func TestReadMetadata_operatorKeyedHandles(t *testing.T) {
	for name, class := range map[string]string{
		"incremental-rocksdb-checkpoint": "IncrementalRemoteKeyedStateHandle",
		"canonical-savepoint":            "KeyGroupsSavepointStateHandle",
		"native-savepoint":               "IncrementalRemoteKeyedStateHandle",
	} {
		m := loadFixture(t, name).read(t)
		for _, op := range m.Operators {
			if op.UID == "count" {
				if len(op.KeyedHandles) != 1 || op.KeyedHandles[class] != 1 || !op.HasKeyedState() {
					t.Errorf("%s: operator %q keyed handles %v, want one %s", name, op.UID, op.KeyedHandles, class)
				}
			} else if op.HasKeyedState() {
				t.Errorf("%s: operator %q keyed handles %v, want none", name, op.UID, op.KeyedHandles)
			}
		}
	}
}
