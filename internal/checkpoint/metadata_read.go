package checkpoint

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf16"
)

// What ReadMetadata reads is Flink 2.2.1's own format, read from
// flink-runtime (release-2.2.1): Checkpoints.loadCheckpointMetadata reads the
// header, then MetadataSerializers.getSerializer(version).deserialize reads
// the rest. Every field below cites the Flink class and method it comes from;
// no Flink code is copied.

// MaxMetadataSize bounds how many bytes ReadMetadata reads. Flink inlines
// small state into _metadata (ByteStreamStateHandle, below
// state.storage.fs.memory-threshold, at most 1 MiB each), so a file is
// usually kilobytes to a few megabytes; a larger one is refused rather than
// held in memory.
const MaxMetadataSize = 256 << 20

// FileKind says how a snapshot references a file.
type FileKind string

const (
	// FileShared is a file of an incremental checkpoint's shared state
	// (IncrementalRemoteKeyedStateHandle.sharedState, e.g. RocksDB .sst
	// files under <job>/shared/), which later checkpoints reference too.
	FileShared FileKind = "shared"
	// FilePrivate is a file of an incremental checkpoint's private state
	// (IncrementalRemoteKeyedStateHandle.privateState, e.g. MANIFEST).
	FilePrivate FileKind = "private"
	// FileExclusive is any other file named by an absolute path
	// (FileStateHandle): owned by the one checkpoint.
	FileExclusive FileKind = "exclusive"
	// FileRelative is a file named relative to the snapshot's directory
	// (RelativeFileStateHandle): what savepoints write, so that they can be
	// moved.
	FileRelative FileKind = "relative"
	// FileSegment is a part of a physical file shared by several handles
	// when checkpoint file merging is on (SegmentFileStateHandle).
	FileSegment FileKind = "segment"
	// FileChangelog is a file of the changelog state backend's log
	// (ChangelogStateHandleStreamImpl's handles).
	FileChangelog FileKind = "changelog"
)

// Metadata is what a _metadata file says, as far as it matters to find the
// files a snapshot needs.
type Metadata struct {
	// Version is the format version (Flink 2.x writes 6).
	Version int32
	// CheckpointID is the checkpoint's (or savepoint's) ID.
	CheckpointID int64
	// MasterStates is how many master (JobManager hook) states it holds.
	MasterStates int
	// Operators are the operator states, in file order.
	Operators []OperatorState
	// Files are the file references, in file order: one per handle, so a
	// file referenced twice (e.g. segments of one physical file) appears
	// twice. FileURIs lists each file once.
	Files []FileRef
	// InlineHandles counts the ByteStreamStateHandles: state stored inside
	// _metadata itself, not in a file; InlineBytes is their total size.
	InlineHandles int
	InlineBytes   int64
	// Handles counts the state handles read, by Flink class name.
	Handles map[string]int
	// Properties are the CheckpointProperties that end a version 4+ file
	// (MetadataV4Serializer.serializeProperties), nil before; PropertiesSize
	// is their size in bytes.
	Properties     *CheckpointProperties
	PropertiesSize int
}

// OperatorState is one operator's state (Flink's OperatorState).
type OperatorState struct {
	// ID is the OperatorID in Flink's notation (AbstractID.toHexString:
	// the lower then the upper long, big-endian, in hexadecimal).
	ID string
	// Name and UID are recorded from version 5 on; "" when not provided.
	Name, UID                   string
	Parallelism, MaxParallelism int32
	// FullyFinished marks an operator all of whose subtasks had finished
	// (FullyFinishedOperatorState): it has no subtask states.
	FullyFinished bool
	Subtasks      []SubtaskState
	// KeyedHandles counts the keyed state handles (managed and raw) of its
	// subtasks by Flink class, outermost only (a changelog handle's
	// materialized parts are not counted again): empty when the operator
	// has no keyed state. The classes say which backend wrote it
	// (KeyedStateKind).
	KeyedHandles map[string]int
}

// HasKeyedState tells whether any subtask of the operator holds keyed
// state.
func (o OperatorState) HasKeyedState() bool { return len(o.KeyedHandles) > 0 }

// SubtaskState is one subtask's state.
type SubtaskState struct {
	Index int32
	// Finished marks a finished subtask (FinishedOperatorSubtaskState),
	// which has no state.
	Finished bool
	// Files is how many of Metadata.Files this subtask references.
	Files int
}

// FileRef is one reference to a file from a snapshot.
type FileRef struct {
	// URI is absolute: relative paths are resolved against the directory
	// of the _metadata file, as MetadataV2V3SerializerBase.
	// DeserializationContext.getExclusiveDirPath does.
	URI  string
	Kind FileKind
	// Path is the path as written: relative for FileRelative.
	Path string
	// StateSize is the size the handle records: the file's length, or for
	// a segment, the segment's.
	StateSize int64
	// SegmentOffset and SegmentScope are set for FileSegment
	// (SegmentFileStateHandle.startPos and .scope: "EXCLUSIVE" or "SHARED").
	SegmentOffset int64
	SegmentScope  string
	// Handle is the Flink class of the handle.
	Handle string
	// Operator and Subtask say who referenced it.
	Operator string
	Subtask  int32
	// State says which part of the subtask's state references it:
	// "managed-keyed", "raw-keyed", "managed-operator", "raw-operator",
	// "input-channel", "output-channel" or "coordinator".
	State string
	// LocalPath is the backend's local file name for an incremental
	// checkpoint's shared or private file (HandleAndLocalPath.localPath).
	LocalPath string
}

// FileURIs returns the distinct URIs of the files the snapshot references,
// sorted.
func (m *Metadata) FileURIs() []string {
	seen := make(map[string]bool, len(m.Files))
	var out []string
	for _, f := range m.Files {
		if !seen[f.URI] {
			seen[f.URI] = true
			out = append(out, f.URI)
		}
	}
	sort.Strings(out)
	return out
}

// MetadataError is a _metadata file ReadMetadata refuses: what it found and
// at which byte offset.
type MetadataError struct {
	Offset int64
	Msg    string
}

func (e *MetadataError) Error() string {
	return fmt.Sprintf("checkpoint metadata, byte offset %d: %s", e.Offset, e.Msg)
}

// ReadMetadata reads a whole _metadata file, as Flink 2.2 does
// (Checkpoints.loadCheckpointMetadata), and lists the files it references.
// metadataURI is where the file is (or its directory): relative paths are
// resolved against its directory. With metadataURI "", a file naming a
// relative path is refused, as Flink refuses it without a context.
//
// It fails closed: an unknown version or handle type, a truncated file, a
// count or length the rest of the file cannot hold, or trailing bytes are an
// error (a *MetadataError naming what and where), never a guess.
func ReadMetadata(r io.Reader, metadataURI string) (*Metadata, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxMetadataSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint metadata: %w", err)
	}
	if len(b) > MaxMetadataSize {
		return nil, &MetadataError{Offset: MaxMetadataSize, Msg: fmt.Sprintf("larger than %d bytes: refused", MaxMetadataSize)}
	}
	d := &metaDecoder{b: b, m: &Metadata{Handles: map[string]int{}}, subtask: -1}
	if metadataURI != "" {
		u := MetadataURI(metadataURI)
		d.exclusiveDir = u[:strings.LastIndex(u, "/")]
	}
	d.metadata()
	if d.err != nil {
		return nil, d.err
	}
	return d.m, nil
}

// Limits on nesting: Flink nests keyed handles only inside a changelog
// handle (its materialized and non-materialized parts), and stream handles
// only inside a KEY_GROUPS_HANDLE stream handle.
const (
	maxKeyedDepth  = 3
	maxStreamDepth = 3
)

// metaDecoder reads a _metadata file held in memory. Its error is sticky:
// after the first, reads return zero values and the first error stays.
type metaDecoder struct {
	b            []byte
	off          int
	exclusiveDir string // "" without a context (no metadata URI)
	m            *Metadata
	err          *MetadataError

	// where the decoder is, for FileRefs and errors
	version            int32
	operator           string
	subtask            int32
	state              string
	localPath          string
	keyedDepth, sDepth int
	subtaskFiles       *int
	opKeyed            map[string]int // the operator's KeyedHandles
}

func (d *metaDecoder) failAt(at int, format string, args ...any) {
	if d.err != nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if d.operator != "" {
		msg += " (operator " + d.operator
		if d.subtask >= 0 {
			msg += fmt.Sprintf(", subtask %d", d.subtask)
		}
		if d.state != "" {
			msg += ", " + d.state + " state"
		}
		msg += ")"
	}
	d.err = &MetadataError{Offset: int64(at), Msg: msg}
}

func (d *metaDecoder) left() int { return len(d.b) - d.off }

// take returns the next n bytes, or nil (and the error) when the file ends
// first.
func (d *metaDecoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > d.left() {
		d.failAt(d.off, "truncated: %s needs %d bytes, %d left", what, n, d.left())
		return nil
	}
	b := d.b[d.off : d.off+n]
	d.off += n
	return b
}

// DataInputStream.readByte / read (one byte; Flink reads some type bytes
// signed, some unsigned: the values it knows are all small and positive).
func (d *metaDecoder) u8(what string) byte {
	if b := d.take(1, what); b != nil {
		return b[0]
	}
	return 0
}

// DataInputStream.readInt: 4 bytes, big-endian, signed.
func (d *metaDecoder) i32(what string) int32 {
	if b := d.take(4, what); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

// DataInputStream.readLong: 8 bytes, big-endian, signed.
func (d *metaDecoder) i64(what string) int64 {
	if b := d.take(8, what); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// DataInputStream.readBoolean: one byte, anything but 0 is true.
func (d *metaDecoder) boolean(what string) bool { return d.u8(what) != 0 }

// DataInputStream.readUTF: an unsigned 2-byte length, then that many bytes
// of Java's modified UTF-8.
func (d *metaDecoder) utf(what string) string {
	at := d.off
	n := d.take(2, what+" (length)")
	if n == nil {
		return ""
	}
	b := d.take(int(binary.BigEndian.Uint16(n)), what)
	if b == nil {
		return ""
	}
	s, bad := decodeModifiedUTF8(b)
	if bad >= 0 {
		d.failAt(at+2+bad, "%s is not valid modified UTF-8 (DataInputStream.readUTF would refuse it, or it holds an unpaired surrogate)", what)
		return ""
	}
	return s
}

// count reads an int count of elements of at least minEach bytes each, and
// refuses a negative count or one the rest of the file cannot hold: no
// allocation is ever sized from the file beyond what it holds.
func (d *metaDecoder) count(what string, minEach int) int {
	at := d.off
	n := d.i32(what)
	if d.err != nil {
		return 0
	}
	if n < 0 {
		d.failAt(at, "%s is negative (%d)", what, n)
		return 0
	}
	if int64(n)*int64(minEach) > int64(d.left()) {
		each := ""
		if minEach > 1 {
			each = fmt.Sprintf(" (each needs at least %d)", minEach)
		}
		d.failAt(at, "%s is %d, but only %d bytes are left%s", what, n, d.left(), each)
		return 0
	}
	return int(n)
}

// decodeModifiedUTF8 decodes Java's modified UTF-8 (DataInputStream.readUTF):
// 1-, 2- and 3-byte forms, supplementary characters as two 3-byte
// surrogates. It returns the offset of the first bad byte, or -1.
func decodeModifiedUTF8(b []byte) (string, int) {
	var sb strings.Builder
	sb.Grow(len(b))
	var high rune = -1 // a pending high surrogate
	highAt := 0
	for i := 0; i < len(b); {
		c := b[i]
		var r rune
		start := i
		switch c >> 4 {
		case 0, 1, 2, 3, 4, 5, 6, 7:
			r, i = rune(c), i+1
		case 12, 13:
			if i+1 >= len(b) || b[i+1]&0xc0 != 0x80 {
				return "", i
			}
			r, i = rune(c&0x1f)<<6|rune(b[i+1]&0x3f), i+2
		case 14:
			if i+2 >= len(b) || b[i+1]&0xc0 != 0x80 || b[i+2]&0xc0 != 0x80 {
				return "", i
			}
			r, i = rune(c&0x0f)<<12|rune(b[i+1]&0x3f)<<6|rune(b[i+2]&0x3f), i+3
		default:
			return "", i
		}
		switch {
		case r >= 0xd800 && r < 0xdc00:
			if high >= 0 {
				return "", highAt
			}
			high, highAt = r, start
			continue
		case r >= 0xdc00 && r < 0xe000:
			if high < 0 {
				return "", start
			}
			r, high = utf16.DecodeRune(high, r), -1
		default:
			if high >= 0 {
				return "", highAt
			}
		}
		sb.WriteRune(r)
	}
	if high >= 0 {
		return "", highAt
	}
	return sb.String(), -1
}

// Checkpoints.HEADER_MAGIC_NUMBER, and the versions MetadataSerializers
// registers.
func (d *metaDecoder) metadata() {
	// Checkpoints.loadCheckpointMetadata: in.readInt() magic number.
	if magic := uint32(d.i32("the magic number")); d.err == nil && magic != MetadataMagic {
		d.failAt(0, "not checkpoint metadata: it starts with 0x%08x, not Flink's magic number 0x%08x", magic, uint32(MetadataMagic))
	}
	// Checkpoints.loadCheckpointMetadata: in.readInt() version.
	d.version = d.i32("the version")
	if d.err != nil {
		return
	}
	d.m.Version = d.version
	switch d.version {
	case 1:
		// MetadataV1Serializer.deserialize throws: "This savepoint /
		// checkpoint version (Flink 1.1 / 1.2) is no longer supported."
		d.failAt(4, "version 1 not supported: it is Flink 1.1/1.2's format, which Flink 2.x refuses too (MetadataV1Serializer)")
		return
	case 2, 3, 4, 5, 6:
	default:
		d.failAt(4, "version %d not supported: Flink 2.2 reads versions 1 to 6 (MetadataSerializers.getSerializer)", d.version)
		return
	}

	// MetadataV2V3SerializerBase.deserializeMetadata: readLong checkpoint ID,
	// refused when negative.
	at := d.off
	d.m.CheckpointID = d.i64("the checkpoint ID")
	if d.err == nil && d.m.CheckpointID < 0 {
		d.failAt(at, "invalid checkpoint ID %d", d.m.CheckpointID)
	}
	// deserializeMetadata: readInt number of master states, refused when
	// negative; each is at least 4 (magic) + 4 (length) + 10 (version, an
	// empty name, an empty payload) bytes.
	n := d.count("the number of master states", 18)
	for i := 0; i < n && d.err == nil; i++ {
		d.masterState(i)
	}
	d.m.MasterStates = n
	// deserializeMetadata: readInt number of operator states (a negative one
	// fails in new ArrayList). Each is at least 8+8+4+4 (ID, parallelism,
	// max parallelism), 1 (coordinator handle type) and 4 (subtask count).
	n = d.count("the number of operator states", 29)
	for i := 0; i < n && d.err == nil; i++ {
		d.operatorState(i)
	}
	if d.err != nil {
		return
	}
	d.operator, d.subtask, d.state = "", -1, ""
	if d.version >= 4 {
		d.properties()
		return
	}
	// Versions 2 and 3 end with the operator states.
	if d.left() > 0 {
		d.failAt(d.off, "%d bytes follow the operator states; a version %d file ends there", d.left(), d.version)
	}
}

// MetadataV2V3SerializerBase.deserializeMasterState.
func (d *metaDecoder) masterState(i int) {
	what := fmt.Sprintf("master state %d", i)
	at := d.off
	// MASTER_STATE_MAGIC_NUMBER = 0xc96b1696.
	if magic := uint32(d.i32(what + " magic number")); d.err == nil && magic != 0xc96b1696 {
		d.failAt(at, "%s: magic number 0x%08x, not 0xc96b1696", what, magic)
		return
	}
	// readInt numBytes, refused when zero or negative, then the bytes.
	at = d.off
	size := d.i32(what + " length")
	if d.err == nil && size <= 0 {
		d.failAt(at, "%s: length %d (zero or negative)", what, size)
		return
	}
	body := d.take(int(size), what)
	if body == nil {
		return
	}
	// Inside: readInt version, readUTF name, readInt length + bytes, and
	// nothing after ("found trailing bytes in master state").
	inner := &metaDecoder{b: body, m: d.m, subtask: -1}
	inner.i32(what + " version")
	inner.utf(what + " name")
	inner.take(inner.count(what+" payload length", 1), what+" payload")
	if inner.err == nil && inner.left() > 0 {
		inner.failAt(inner.off, "%s: %d trailing bytes", what, inner.left())
	}
	if inner.err != nil {
		d.err = &MetadataError{Offset: int64(at+4) + inner.err.Offset, Msg: inner.err.Msg}
	}
}

// MetadataV2Serializer.deserializeOperatorState (version 2),
// MetadataV3Serializer.deserializeOperatorState (3, 4) and
// MetadataV5Serializer.deserializeOperatorState (5, 6).
func (d *metaDecoder) operatorState(i int) {
	d.operator, d.subtask, d.state = fmt.Sprintf("#%d", i), -1, ""
	var op OperatorState
	if d.version >= 5 {
		// MetadataV5Serializer: readUTF name, readUTF uid ("" for none).
		op.Name = d.utf("the operator name")
		op.UID = d.utf("the operator uid")
	}
	// new OperatorID(dis.readLong(), dis.readLong()): lower, then upper part.
	if id := d.take(16, "the operator ID"); id != nil {
		op.ID = hex.EncodeToString(id)
		d.operator = op.ID
	}
	// readInt parallelism, readInt max parallelism; the OperatorState
	// constructor refuses parallelism > max parallelism.
	at := d.off
	op.Parallelism = d.i32("the parallelism")
	op.MaxParallelism = d.i32("the max parallelism")
	if d.err == nil && (op.Parallelism < 0 || op.Parallelism > op.MaxParallelism) {
		d.failAt(at, "parallelism %d, max parallelism %d (Flink needs 0 <= parallelism <= max parallelism)", op.Parallelism, op.MaxParallelism)
	}
	if d.version == 2 {
		// MetadataV2Serializer: readInt "chain length", unused since Flink 1.3.
		d.i32("the chain length")
	}
	coordinator := -1
	if d.version >= 3 {
		// deserializeAndCheckByteStreamStateHandle: the coordinator's state,
		// null or inline only.
		d.state = "coordinator"
		at = d.off
		coordinator = d.streamHandle(FileExclusive, "the coordinator state")
		if d.err == nil && coordinator != handleNull && coordinator != handleByteStream {
			d.failAt(at, "the coordinator state is a %s, not a ByteStreamStateHandle", streamHandleClass(coordinator))
		}
		d.state = ""
	}
	// readInt number of subtask states; from version 3 a negative one marks
	// a FullyFinishedOperatorState, which has no coordinator state.
	at = d.off
	n := d.i32("the number of subtask states")
	if d.err != nil {
		return
	}
	if n < 0 {
		if d.version == 2 {
			d.failAt(at, "the number of subtask states is negative (%d)", n)
			return
		}
		if coordinator != handleNull {
			d.failAt(at, "a fully finished operator with coordinator state (Flink: \"Coordinator State should be null for fully finished operator state\")")
			return
		}
		op.FullyFinished = true
		d.m.Operators = append(d.m.Operators, op)
		return
	}
	// Each subtask is at least its index (4 bytes): a finished one is
	// nothing more.
	if int64(n)*4 > int64(d.left()) {
		d.failAt(at, "the number of subtask states is %d, but only %d bytes are left", n, d.left())
		return
	}
	seen := map[int32]bool{}
	op.KeyedHandles = map[string]int{}
	d.opKeyed = op.KeyedHandles
	defer func() { d.opKeyed = nil }()
	for j := 0; j < int(n) && d.err == nil; j++ {
		at = d.off
		stored := int64(d.i32("the subtask index"))
		st := SubtaskState{Index: int32(stored)}
		if d.version >= 3 && stored < 0 {
			// deserializeSubtaskIndexAndFinishedState: a finished subtask is
			// stored as -(index+1).
			st.Index, st.Finished = int32(-stored-1), true
			if -stored-1 > int64(op.Parallelism) {
				st.Index = op.Parallelism // out of range, refused below
			}
		}
		// OperatorState.putState refuses an index outside [0, parallelism);
		// a repeated index would silently replace the first in Flink: refused.
		if d.err == nil && (st.Index < 0 || st.Index >= op.Parallelism) {
			d.failAt(at, "subtask index %d is outside [0, %d)", stored, op.Parallelism)
		}
		if d.err == nil && seen[st.Index] {
			d.failAt(at, "subtask %d appears twice", st.Index)
		}
		seen[st.Index] = true
		if d.err != nil {
			return
		}
		if !st.Finished {
			d.subtask = st.Index
			d.subtaskFiles = &st.Files
			d.subtaskState()
			d.subtaskFiles = nil
			d.subtask, d.state = -1, ""
		}
		op.Subtasks = append(op.Subtasks, st)
	}
	d.m.Operators = append(d.m.Operators, op)
}

// MetadataV2V3SerializerBase.deserializeSubtaskState, with
// MetadataV2Serializer's and MetadataV3Serializer's additions.
func (d *metaDecoder) subtaskState() {
	if d.version == 2 {
		// MetadataV2Serializer.deserializeSubtaskState: readLong "duration",
		// readInt number of legacy states (Flink refuses any).
		d.i64("the duration")
		at := d.off
		if n := d.i32("the number of legacy states"); d.err == nil && n != 0 {
			d.failAt(at, "%d legacy (Flink <= 1.1) states: not supported", n)
			return
		}
	}
	// readInt != 0: has managed operator state; then the handle.
	d.state = "managed-operator"
	if d.i32("has managed operator state") != 0 {
		d.operatorStateHandle()
	}
	// readInt != 0: has raw operator state; then the handle.
	d.state = "raw-operator"
	if d.i32("has raw operator state") != 0 {
		d.operatorStateHandle()
	}
	// deserializeKeyedStateHandle, managed then raw.
	d.state = "managed-keyed"
	d.keyedStateHandle()
	d.state = "raw-keyed"
	d.keyedStateHandle()
	if d.version == 2 {
		// MetadataV2V3SerializerBase.deserializeInputStateHandle and
		// deserializeOutputStateHandle read nothing in version 2.
		return
	}
	// MetadataV3Serializer.deserializeInputStateHandle and
	// deserializeOutputStateHandle: deserializeCollection (readInt size, then
	// each) with ChannelStateHandleSerializerV1 for versions 3 to 5, and V2
	// for 6 (MetadataV6Serializer.getChannelStateHandleSerializer).
	// The smallest handle: V1's 4+4+4+4+8 bytes and a null delegate (25);
	// V2's type byte and a merged handle, 4+8, a null delegate, 4 (18).
	least := 25
	if d.version >= 6 {
		least = 18
	}
	d.state = "input-channel"
	n := d.count("the number of input channel state handles", least)
	for i := 0; i < n && d.err == nil; i++ {
		d.channelStateHandle(true)
	}
	d.state = "output-channel"
	n = d.count("the number of result subpartition state handles", least)
	for i := 0; i < n && d.err == nil; i++ {
		d.channelStateHandle(false)
	}
}

// ChannelStateHandleSerializerV1.deserializeChannelStateHandle, and
// ChannelStateHandleSerializerV2.deserializeInputStateHandle /
// deserializeOutputStateHandle.
func (d *metaDecoder) channelStateHandle(input bool) {
	class := "ResultSubpartitionStateHandle"
	if input {
		class = "InputChannelStateHandle"
	}
	if d.version >= 6 {
		// ChannelStateHandleSerializerV2: a type byte (dis.read()):
		// INPUT_CHANNEL_STATE_HANDLE = 1, RESULT_SUBPARTITION_STATE_HANDLE = 2,
		// MERGED_INPUT_CHANNEL_STATE_HANDLE = 3,
		// MERGED_RESULT_SUBPARTITION_STATE_HANDLE = 4.
		at := d.off
		t := d.u8("the channel state handle type")
		if d.err != nil {
			return
		}
		switch {
		case input && t == 1, !input && t == 2:
		case input && t == 3, !input && t == 4:
			// deserializeMergedChannelStateHandle: readInt subtask index,
			// readLong state size, the delegate handle, readInt length +
			// the serialized channel offsets.
			d.m.Handles["Merged"+class]++
			d.i32("the subtask index")
			d.i64("the state size")
			d.streamHandle(FileExclusive, "the channel state")
			d.take(d.count("the serialized channel offsets length", 1), "the serialized channel offsets")
			return
		default:
			known := "2 and 4"
			if input {
				known = "1 and 3"
			}
			d.failAt(at, "unknown %s type %d (ChannelStateHandleSerializerV2 knows %s)", class, t, known)
			return
		}
	}
	// ChannelStateHandleSerializerV1.deserializeChannelStateHandle: readInt
	// subtask index, the info (ChannelStateHelper.INPUT_CHANNEL_INFO_READER /
	// RESULT_SUBPARTITION_INFO_READER: two ints), readInt offsets count +
	// the longs, readLong size, the delegate handle.
	d.m.Handles[class]++
	d.i32("the subtask index")
	d.i32("the gate or partition index")
	d.i32("the channel or subpartition index")
	d.take(8*d.count("the number of channel state offsets", 8), "the channel state offsets")
	d.i64("the state size")
	d.streamHandle(FileExclusive, "the channel state")
}

// MetadataV2V3SerializerBase.deserializeOperatorStateHandle.
func (d *metaDecoder) operatorStateHandle() {
	at := d.off
	t := d.u8("the operator state handle type")
	if d.err != nil {
		return
	}
	switch t {
	case 0: // NULL_HANDLE
		return
	case 4, 17: // PARTITIONABLE_OPERATOR_STATE_HANDLE, SEGMENT_PARTITIONABLE_OPERATOR_STATE_HANDLE
	default:
		d.failAt(at, "unknown operator state handle type %d (Flink knows 0, 4 and 17)", t)
		return
	}
	// readInt map size, then per state: readUTF name, readByte mode
	// (OperatorStateHandle.Mode ordinal: SPLIT_DISTRIBUTE, UNION, BROADCAST),
	// readInt offsets count + the longs.
	n := d.count("the number of operator states in the handle", 7)
	for i := 0; i < n && d.err == nil; i++ {
		d.utf("the operator state name")
		at := d.off
		if mode := d.u8("the distribution mode"); d.err == nil && mode > 2 {
			d.failAt(at, "distribution mode %d is not an OperatorStateHandle.Mode (0 to 2)", mode)
		}
		d.take(8*d.count("the number of partition offsets", 8), "the partition offsets")
	}
	if t == 4 {
		d.m.Handles["OperatorStreamStateHandle"]++
		d.streamHandle(FileExclusive, "the operator state")
		return
	}
	// SEGMENT_PARTITIONABLE_OPERATOR_STATE_HANDLE: readUTF task-owned
	// directory, readUTF shared directory, readBoolean isEmpty, then a
	// handle that must be a SegmentFileStateHandle (Preconditions.
	// checkArgument); the directories are directories, not files.
	d.utf("the task-owned directory")
	d.utf("the shared directory")
	if d.boolean("is empty") {
		d.m.Handles["EmptyFileMergingOperatorStreamStateHandle"]++
	} else {
		d.m.Handles["FileMergingOperatorStreamStateHandle"]++
	}
	at = d.off
	if h := d.streamHandle(FileSegment, "the operator state"); d.err == nil && h != handleSegment && h != handleEmptySegment {
		d.failAt(at, "a file-merging operator state handle holds a %s, not a SegmentFileStateHandle", streamHandleClass(h))
	}
}

// MetadataV2V3SerializerBase type bytes of keyed state handles.
const (
	keyedNull                   = 0  // NULL_HANDLE
	keyedKeyGroups              = 3  // KEY_GROUPS_HANDLE
	keyedIncremental            = 5  // INCREMENTAL_KEY_GROUPS_HANDLE
	keyedSavepointKeyGroups     = 7  // SAVEPOINT_KEY_GROUPS_HANDLE
	keyedChangelog              = 8  // CHANGELOG_HANDLE
	keyedChangelogBytes         = 9  // CHANGELOG_BYTE_INCREMENT_HANDLE
	keyedChangelogFile          = 10 // CHANGELOG_FILE_INCREMENT_HANDLE
	keyedIncrementalV2          = 11 // INCREMENTAL_KEY_GROUPS_HANDLE_V2
	keyedKeyGroupsV2            = 12 // KEY_GROUPS_HANDLE_V2
	keyedChangelogFileV2        = 13 // CHANGELOG_FILE_INCREMENT_HANDLE_V2
	keyedChangelogV2            = 14 // CHANGELOG_HANDLE_V2
	keyedUnknown            int = -1
)

// keyedHandleClass is the Flink class a keyed state handle type byte
// deserializes to (MetadataV2V3SerializerBase.deserializeKeyedStateHandle),
// or "" for an unknown one.
func keyedHandleClass(t int) string {
	switch t {
	case keyedKeyGroups, keyedKeyGroupsV2:
		return "KeyGroupsStateHandle"
	case keyedSavepointKeyGroups:
		return "KeyGroupsSavepointStateHandle"
	case keyedIncremental, keyedIncrementalV2:
		return "IncrementalRemoteKeyedStateHandle"
	case keyedChangelog, keyedChangelogV2:
		return "ChangelogStateBackendHandle"
	case keyedChangelogBytes:
		return "InMemoryChangelogStateHandle"
	case keyedChangelogFile, keyedChangelogFileV2:
		return "ChangelogStateHandleStreamImpl"
	}
	return ""
}

// keyGroupRange reads readInt start, readInt number of key groups
// (KeyGroupRange.of(start, start+n-1); the KeyGroupRange constructor refuses
// a negative start, a negative count fails in new long[n]).
func (d *metaDecoder) keyGroupRange() int {
	at := d.off
	start := d.i32("the first key group")
	n := d.i32("the number of key groups")
	if d.err != nil {
		return 0
	}
	if n < 0 || (n > 0 && start < 0) || int64(start)+int64(n)-1 > 1<<31-1 {
		d.failAt(at, "key group range: first %d, count %d", start, n)
		return 0
	}
	return int(n)
}

// MetadataV2V3SerializerBase.deserializeKeyedStateHandle. It returns the
// type byte read.
func (d *metaDecoder) keyedStateHandle() int {
	at := d.off
	t := int(int8(d.u8("the keyed state handle type")))
	if d.err != nil {
		return keyedUnknown
	}
	if t == keyedNull {
		return t
	}
	if d.keyedDepth >= maxKeyedDepth {
		d.failAt(at, "keyed state handles nested more than %d deep", maxKeyedDepth)
		return keyedUnknown
	}
	if d.keyedDepth == 0 && d.opKeyed != nil {
		if c := keyedHandleClass(t); c != "" {
			d.opKeyed[c]++
		}
	}
	d.keyedDepth++
	defer func() { d.keyedDepth-- }()
	switch t {
	case keyedKeyGroups, keyedKeyGroupsV2, keyedSavepointKeyGroups:
		// key group range, readLong offset per key group, the delegate stream
		// handle; KEY_GROUPS_HANDLE_V2 then readUTF the StateHandleID.
		if t == keyedSavepointKeyGroups {
			d.m.Handles["KeyGroupsSavepointStateHandle"]++
		} else {
			d.m.Handles["KeyGroupsStateHandle"]++
		}
		n := d.keyGroupRange()
		d.take(8*d.bounded(n, 8, "the key group offsets"), "the key group offsets")
		d.streamHandle(FileExclusive, "the key groups' state")
		if t == keyedKeyGroupsV2 {
			d.utf("the state handle ID")
		}
	case keyedIncremental, keyedIncrementalV2:
		d.incrementalHandle(t == keyedIncrementalV2)
	case keyedChangelog, keyedChangelogV2:
		// readInt start, readInt count, readLong checkpointed size, readInt +
		// the materialized handles, readInt + the non-materialized
		// (ChangelogStateHandle) handles, readLong materialization ID,
		// CHANGELOG_HANDLE_V2: readLong checkpoint ID; readUTF handle ID.
		d.m.Handles["ChangelogStateBackendHandle"]++
		d.keyGroupRange()
		d.i64("the checkpointed size")
		n := d.count("the number of materialized handles", 1)
		for i := 0; i < n && d.err == nil; i++ {
			d.keyedStateHandle()
		}
		n = d.count("the number of non-materialized handles", 1)
		for i := 0; i < n && d.err == nil; i++ {
			at := d.off
			// Flink casts each to ChangelogStateHandle.
			switch h := d.keyedStateHandle(); h {
			case keyedNull, keyedChangelogBytes, keyedChangelogFile, keyedChangelogFileV2, keyedUnknown:
			default:
				d.failAt(at, "a non-materialized changelog handle of type %d, not a ChangelogStateHandle", h)
			}
		}
		d.i64("the materialization ID")
		if t == keyedChangelogV2 {
			d.i64("the checkpoint ID")
		}
		d.utf("the state handle ID")
	case keyedChangelogBytes:
		// InMemoryChangelogStateHandle: key group range, readLong from,
		// readLong to, readInt number of changes, each readInt key group +
		// readInt length + bytes; readUTF handle ID. Inline.
		d.m.Handles["InMemoryChangelogStateHandle"]++
		d.keyGroupRange()
		d.i64("the first sequence number")
		d.i64("the last sequence number")
		n := d.count("the number of state changes", 8)
		for i := 0; i < n && d.err == nil; i++ {
			d.i32("the key group")
			d.m.InlineBytes += int64(len(d.take(d.count("the state change length", 1), "the state change")))
		}
		d.utf("the state handle ID")
	case keyedChangelogFile, keyedChangelogFileV2:
		// ChangelogStateHandleStreamImpl: key group range, readInt number
		// of handles, each readLong offset + stream handle; readLong size,
		// readLong checkpointed size, readUTF handle ID, V2: readUTF storage
		// identifier.
		d.m.Handles["ChangelogStateHandleStreamImpl"]++
		d.keyGroupRange()
		n := d.count("the number of changelog stream handles", 9)
		for i := 0; i < n && d.err == nil; i++ {
			d.i64("the offset")
			d.streamHandle(FileChangelog, "the changelog")
		}
		d.i64("the state size")
		d.i64("the checkpointed size")
		d.utf("the state handle ID")
		if t == keyedChangelogFileV2 {
			d.utf("the storage identifier")
		}
	default:
		d.failAt(at, "unknown keyed state handle type %d (MetadataV2V3SerializerBase.deserializeKeyedStateHandle knows 0, 3, 5, 7 to 14)", t)
		return keyedUnknown
	}
	return t
}

// bounded checks that n elements of each bytes fit in the rest of the file.
func (d *metaDecoder) bounded(n, each int, what string) int {
	if d.err == nil && int64(n)*int64(each) > int64(d.left()) {
		d.failAt(d.off, "truncated: %d %s need %d bytes, %d left", n, what, int64(n)*int64(each), d.left())
		return 0
	}
	return n
}

// MetadataV2V3SerializerBase.deserializeIncrementalStateHandle.
func (d *metaDecoder) incrementalHandle(v2 bool) {
	d.m.Handles["IncrementalRemoteKeyedStateHandle"]++
	// readLong checkpoint ID, readUTF backend ID, key group range,
	// INCREMENTAL_KEY_GROUPS_HANDLE_V2: readLong checkpointed size.
	d.i64("the checkpoint ID of the incremental handle")
	d.utf("the backend ID")
	d.keyGroupRange()
	if v2 {
		d.i64("the checkpointed size")
	}
	// The meta data handle (written by the checkpoint, exclusive).
	d.streamHandle(FileExclusive, "the incremental state's meta data")
	// deserializeHandleAndLocalPathList, shared then private: readInt size,
	// each readUTF local path + stream handle. In a completed checkpoint
	// the shared handles are the real ones: IncrementalRemoteKeyedStateHandle.
	// registerSharedStates replaces each PlaceholderStreamStateHandle with
	// the registered original before _metadata is written, and
	// serializeStreamStateHandle has no code for a placeholder.
	for _, kind := range []FileKind{FileShared, FilePrivate} {
		n := d.count("the number of "+string(kind)+" state handles", 3)
		for i := 0; i < n && d.err == nil; i++ {
			d.localPath = d.utf("the local path")
			d.streamHandle(kind, string(kind)+" state "+d.localPath)
			d.localPath = ""
		}
	}
	if v2 {
		d.utf("the state handle ID")
	}
}

// MetadataV2V3SerializerBase type bytes of stream state handles.
const (
	handleNull         = 0  // NULL_HANDLE
	handleByteStream   = 1  // BYTE_STREAM_STATE_HANDLE
	handleFile         = 2  // FILE_STREAM_STATE_HANDLE
	handleKeyGroups    = 3  // KEY_GROUPS_HANDLE
	handleRelative     = 6  // RELATIVE_STREAM_STATE_HANDLE
	handleSegment      = 15 // SEGMENT_FILE_HANDLE
	handleEmptySegment = 16 // EMPTY_SEGMENT_FILE_HANDLE
	handleUnknown      = -1
)

func streamHandleClass(t int) string {
	switch t {
	case handleNull:
		return "null handle"
	case handleByteStream:
		return "ByteStreamStateHandle"
	case handleFile:
		return "FileStateHandle"
	case handleKeyGroups:
		return "KeyGroupsStateHandle"
	case handleRelative:
		return "RelativeFileStateHandle"
	case handleSegment:
		return "SegmentFileStateHandle"
	case handleEmptySegment:
		return "EmptySegmentFileStateHandle"
	}
	return fmt.Sprintf("handle of unknown type %d", t)
}

// MetadataV2V3SerializerBase.deserializeStreamStateHandle. kind is what a
// file found here is (shared, private, exclusive); relative and segment
// handles are always those. It returns the type byte read.
func (d *metaDecoder) streamHandle(kind FileKind, what string) int {
	at := d.off
	// dis.read(): the type byte, unsigned.
	t := int(d.u8("the stream state handle type of " + what))
	if d.err != nil {
		return handleUnknown
	}
	if t != handleNull {
		d.m.Handles[streamHandleClass(t)]++
	}
	switch t {
	case handleNull:
	case handleFile:
		// readLong size, readUTF path (FileStateHandle.getFilePath().toString()).
		size := d.i64("the file size")
		pathAt := d.off
		p := d.utf("the file path")
		if d.err == nil && p == "" {
			d.failAt(pathAt, "an empty file path in %s", what)
		}
		d.file(FileRef{URI: p, Path: p, Kind: kind, StateSize: size, Handle: "FileStateHandle"})
	case handleByteStream:
		// readUTF handle name, readInt length + the bytes: inline state.
		d.utf("the handle name")
		data := d.take(d.count("the inline state length", 1), "the inline state of "+what)
		if d.err == nil {
			d.m.InlineHandles++
			d.m.InlineBytes += int64(len(data))
		}
	case handleRelative:
		// Needs the context (refused without one); readUTF relative path,
		// readLong size; new Path(context.getExclusiveDirPath(), relative).
		if d.exclusiveDir == "" {
			d.failAt(at, "a RelativeFileStateHandle, but no metadata URI to resolve it against (Flink refuses it without a context too)")
			return handleUnknown
		}
		pathAt := d.off
		rel := d.utf("the relative path")
		size := d.i64("the file size")
		if d.err != nil {
			return handleUnknown
		}
		if reason := badRelativePath(rel); reason != "" {
			d.failAt(pathAt, "relative path %q %s", rel, reason)
			return handleUnknown
		}
		d.file(FileRef{URI: d.exclusiveDir + "/" + rel, Path: rel, Kind: FileRelative, StateSize: size, Handle: "RelativeFileStateHandle"})
	case handleKeyGroups:
		// A KeyGroupsStateHandle as a stream handle: key group range,
		// offsets, then its delegate stream handle.
		if d.sDepth >= maxStreamDepth {
			d.failAt(at, "stream state handles nested more than %d deep", maxStreamDepth)
			return handleUnknown
		}
		n := d.keyGroupRange()
		d.take(8*d.bounded(n, 8, "the key group offsets"), "the key group offsets")
		d.sDepth++
		d.streamHandle(kind, what)
		d.sDepth--
	case handleSegment:
		// readLong start position, readLong state size, readInt scope
		// (CheckpointedStateScope ordinal: EXCLUSIVE, SHARED), readUTF
		// physical file path, readUTF logical file ID.
		start := d.i64("the segment start")
		size := d.i64("the segment size")
		scopeAt := d.off
		scope := d.i32("the segment scope")
		if d.err == nil && (scope < 0 || scope > 1) {
			d.failAt(scopeAt, "segment scope %d is not a CheckpointedStateScope (0 or 1)", scope)
		}
		pathAt := d.off
		p := d.utf("the segment's file path")
		d.utf("the logical file ID")
		if d.err == nil && p == "" {
			d.failAt(pathAt, "an empty segment file path in %s", what)
		}
		d.file(FileRef{URI: p, Path: p, Kind: FileSegment, StateSize: size, SegmentOffset: start,
			SegmentScope: [...]string{"EXCLUSIVE", "SHARED"}[scope&1], Handle: "SegmentFileStateHandle"})
	case handleEmptySegment:
		// EmptySegmentFileStateHandle.INSTANCE: nothing more, no file.
	default:
		d.failAt(at, "unknown stream state handle type %d in %s (MetadataV2V3SerializerBase.deserializeStreamStateHandle knows 0, 1, 2, 3, 6, 15, 16)", t, what)
		return handleUnknown
	}
	return t
}

// badRelativePath says what is wrong with a RelativeFileStateHandle's path
// for it to be resolved plainly inside the snapshot's directory, or "".
// Flink writes a bare file name (FsCheckpointStreamFactory's random name).
func badRelativePath(rel string) string {
	switch {
	case rel == "":
		return "is empty"
	case strings.HasPrefix(rel, "/"):
		return "is absolute"
	case strings.Contains(rel, ":"):
		return "has a colon (a URI scheme?)"
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "has an empty, \".\" or \"..\" segment"
		}
	}
	return ""
}

func (d *metaDecoder) file(f FileRef) {
	if d.err != nil {
		return
	}
	f.Operator, f.Subtask, f.State, f.LocalPath = d.operator, d.subtask, d.state, d.localPath
	d.m.Files = append(d.m.Files, f)
	if d.subtaskFiles != nil {
		*d.subtaskFiles++
	}
}
