package opmodel

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// The _metadata the operator model writes is in Flink 2.2.1's own format
// (version 6, as Checkpoints.storeCheckpointMetadata writes it with
// MetadataV6Serializer), so that whatever reads a real _metadata — the
// provider's restore check, the latest complete checkpoint, the orphan
// report — reads the model's too, and sees the files the model wrote. The
// content is the smallest a job has: one operator, one subtask, its state
// in the files the model writes. The CheckpointProperties that end the file
// are not built here: they are the bytes real Flink 2.2.1 wrote at the end
// of internal/checkpoint/testdata's incremental checkpoint and canonical
// savepoint (Java serialization, MetadataV4Serializer.serializeProperties).

var (
	//go:embed flinkmeta/checkpoint-properties.bin
	checkpointProperties []byte
	//go:embed flinkmeta/savepoint-properties.bin
	savepointProperties []byte
)

const (
	metadataMagic   = 0x4960672d // Checkpoints.HEADER_MAGIC_NUMBER
	metadataVersion = 6
)

// modelOperatorID is the one operator's OperatorID (two longs).
var modelOperatorID = [16]byte{0x7e, 0x57, 0xbe, 0xd0, 0, 0, 0, 1, 0x7e, 0x57, 0xbe, 0xd0, 0, 0, 0, 2}

// metaWriter writes as Java's DataOutputStream does.
type metaWriter struct {
	b   []byte
	err error
}

func (w *metaWriter) u8(v byte)   { w.b = append(w.b, v) }
func (w *metaWriter) i32(v int32) { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *metaWriter) i64(v int64) { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }

// utf is DataOutputStream.writeUTF for ASCII text (the model writes no
// other): a 2-byte length, then the bytes.
func (w *metaWriter) utf(s string) {
	for _, r := range s {
		if r == 0 || r > 0x7f {
			w.err = fmt.Errorf("model metadata: %q is not ASCII", s)
			return
		}
	}
	if len(s) > 0xffff {
		w.err = fmt.Errorf("model metadata: a string of %d bytes", len(s))
		return
	}
	w.b = binary.BigEndian.AppendUint16(w.b, uint16(len(s)))
	w.b = append(w.b, s...)
}

// jobParallelism is the parallelism and max parallelism the model's one
// operator runs with, as Flink gives them: job.parallelism
// (parallelism.default), and pipeline.max-parallelism when the
// configuration sets it, else KeyGroupRangeAssignment.
// computeDefaultMaxParallelism of the parallelism (flink-runtime
// release-2.2.1). The model does not adopt a restored snapshot's max
// parallelism as Flink does when none is configured
// (StateAssignmentOperation.checkParallelismPreconditions).
type jobParallelism struct{ p, max int32 }

// specParallelism reads them from a FlinkDeployment spec.
func specParallelism(spec map[string]any) jobParallelism {
	p := int32(1)
	if job, ok := spec["job"].(map[string]any); ok {
		switch v := job["parallelism"].(type) {
		case int64:
			p = int32(v)
		case float64:
			p = int32(v)
		}
	}
	if p < 1 {
		p = 1
	}
	if m, err := strconv.Atoi(strings.TrimSpace(confValue(spec, "pipeline.max-parallelism"))); err == nil && m >= int(p) && m <= 1<<15 {
		return jobParallelism{p, int32(m)}
	}
	return jobParallelism{p, computeDefaultMaxParallelism(p)}
}

// computeDefaultMaxParallelism is KeyGroupRangeAssignment's:
// min(max(roundUpToPowerOfTwo(p + p/2), 128), 32768).
func computeDefaultMaxParallelism(p int32) int32 {
	n := int32(1)
	for n < p+p/2 {
		n <<= 1
	}
	return min(max(n, 128), 1<<15)
}

// keyGroups is how many key groups subtask 0 holds
// (KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex: from 0 to
// (max-1)/p).
func (j jobParallelism) keyGroups() int32 { return (j.max-1)/j.p + 1 }

// header: magic, version, checkpoint ID, no master states, one operator
// (V5+: name and uid; ID; the job's parallelism and max parallelism; no
// coordinator state) with one subtask, index 0 (the model writes the state
// of one subtask, whatever the parallelism).
func (w *metaWriter) header(checkpointID int64, par jobParallelism) {
	w.i32(metadataMagic)
	w.i32(metadataVersion)
	w.i64(checkpointID)
	w.i32(0)
	w.i32(1)
	w.utf("test bed job")
	w.utf("")
	w.b = append(w.b, modelOperatorID[:]...)
	w.i32(par.p)
	w.i32(par.max)
	w.u8(0) // NULL_HANDLE: no coordinator state
	w.i32(1)
	w.i32(0)
}

// operatorState is managed operator state: a
// PARTITIONABLE_OPERATOR_STATE_HANDLE (4) with one SPLIT_DISTRIBUTE state
// at offset 0, whose bytes are in the stream handle delegate writes.
func (w *metaWriter) operatorState(delegate func()) {
	w.i32(1)
	w.u8(4)
	w.i32(1)
	w.utf("state")
	w.u8(0)
	w.i32(1)
	w.i64(0)
	delegate()
	w.i32(0) // no raw operator state
}

// fileHandle is a FILE_STREAM_STATE_HANDLE (2): size, absolute path.
func (w *metaWriter) fileHandle(size int64, uri string) {
	w.u8(2)
	w.i64(size)
	w.utf(uri)
}

// end: no raw keyed state, no channel state (V6: two empty collections),
// then the properties.
func (w *metaWriter) end(properties []byte) ([]byte, error) {
	w.u8(0)
	w.i32(0)
	w.i32(0)
	w.b = append(w.b, properties...)
	return w.b, w.err
}

// modelFile is a file the model writes and its _metadata references.
type modelFile struct {
	uri  string
	size int64
}

// checkpointMetadata is the _metadata of an incremental RocksDB checkpoint
// n: operator state in taskOwned; keyed state an
// INCREMENTAL_KEY_GROUPS_HANDLE_V2 (11) with its meta data in exclusive
// (a file of chk-N) and one shared file (of <job>/shared/).
func checkpointMetadata(n int64, par jobParallelism, taskOwned, exclusive, shared modelFile) ([]byte, error) {
	w := &metaWriter{}
	w.header(n, par)
	w.operatorState(func() { w.fileHandle(taskOwned.size, taskOwned.uri) })
	w.u8(11)
	w.i64(n)
	w.utf("test-bed-backend")
	w.i32(0)               // key groups from 0,
	w.i32(par.keyGroups()) // subtask 0's
	w.i64(exclusive.size + shared.size)
	w.fileHandle(exclusive.size, exclusive.uri)
	w.i32(1)
	w.utf("000001.sst")
	w.fileHandle(shared.size, shared.uri)
	w.i32(0) // no private files
	w.utf("test-bed-handle-" + fmt.Sprint(n))
	return w.end(checkpointProperties)
}

// savepointMetadata is the _metadata of a canonical savepoint whose
// operator state is in one file of its directory, named relative to it
// (RELATIVE_STREAM_STATE_HANDLE, 6) as savepoints name their files, and
// no keyed state. The model takes no checkpoint ID for a savepoint: id is
// the job's last checkpoint's.
func savepointMetadata(id int64, par jobParallelism, name string, size int64) ([]byte, error) {
	w := &metaWriter{}
	w.header(id, par)
	w.operatorState(func() {
		w.u8(6)
		w.utf(name)
		w.i64(size)
	})
	w.u8(0) // no managed keyed state
	return w.end(savepointProperties)
}
