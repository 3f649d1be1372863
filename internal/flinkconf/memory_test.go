package flinkconf

import (
	"strings"
	"testing"
)

// memCase is one process size with a flink_configuration, and what Flink
// makes of it. Every verdict below was checked against Flink itself: the
// same sizes and keys given to JobManagerProcessUtils and
// TaskExecutorProcessUtils of flink-runtime 1.20.1 (the operator's Flink,
// which derives both specs before deploying), 2.0.0, 2.1.0 and 2.2.1
// agreed with the model, bound by bound.
type memCase struct {
	name   string
	memory string
	extra  map[string]string
	kind   int    // memOK, memTooSmall, ...
	text   string // in the detail
}

func runMemCases(t *testing.T, attr string, cases []memCase) {
	t.Helper()
	for _, c := range cases {
		in := Input{FlinkVersion: "2.2.1", Identity: "irsa", State: State{Backend: "hashmap", CheckpointDir: "s3://acme-flink-state/p/c"}, Extra: c.extra}
		model := jobManagerModel
		if attr == "task_manager.memory" {
			in.TaskManagerMemory = c.memory
			model = taskManagerModel
		} else {
			in.JobManagerMemory = c.memory
		}
		if kind := model.check(c.memory, c.extra).kind; kind != c.kind {
			t.Errorf("%s %q (%s) with %v: kind %d, want %d", attr, c.memory, c.name, c.extra, kind, c.kind)
			continue
		}
		var details []string
		_, fs := Derive(in)
		for _, f := range fs {
			if f.Severity != Error {
				continue
			}
			p := strings.Join(f.Path, ".")
			if p == attr || (c.kind == memBadKey && strings.HasPrefix(p, "flink_configuration.")) {
				details = append(details, f.Detail)
			} else {
				t.Errorf("%s %q (%s): unexpected error on %s: %s", attr, c.memory, c.name, p, f.Detail)
			}
		}
		if c.kind == memOK {
			if len(details) > 0 {
				t.Errorf("%s %q (%s) with %v: refused: %v", attr, c.memory, c.name, c.extra, details)
			}
			continue
		}
		if len(details) != 1 || !strings.Contains(details[0], c.text) {
			t.Errorf("%s %q (%s): details %q do not say %q", attr, c.memory, c.name, details, c.text)
		}
	}
}

func TestJobManagerMemory(t *testing.T) {
	runMemCases(t, "job_manager.memory", []memCase{
		// Defaults: metaspace 256m + overhead max(10%, 192m) + off-heap 128m
		// must leave some heap.
		{"issue 36's size", "256m", nil, memTooSmall, "Use at least 577m"},
		{"issue 36's size names the parts", "256m", nil, memTooSmall, "JVM metaspace 256 MiB (jobmanager.memory.jvm-metaspace.size), JVM overhead 192 MiB"},
		{"one MiB below", "576m", nil, memTooSmall, "not more than the off-heap memory"},
		{"smallest", "577m", nil, memOK, ""},
		{"tests' size", "1024m", nil, memOK, ""},
		{"guide's size", "2048m", nil, memOK, ""},
		{"Kubernetes quantity", "2Gi", nil, memOK, ""},
		{"gigabytes", "1g", nil, memOK, ""},
		// A larger metaspace makes a size that was fine too small.
		{"raised metaspace", "1024m", map[string]string{"jobmanager.memory.jvm-metaspace.size": "1g"}, memTooSmall, "Use at least 1345m"},
		{"raised metaspace, enough", "1345m", map[string]string{"jobmanager.memory.jvm-metaspace.size": "1g"}, memOK, ""},
		{"raised off-heap", "1024m", map[string]string{"jobmanager.memory.off-heap.size": "1g"}, memTooSmall, "Use at least 1473m"},
		// A lower overhead makes a small size work.
		{"default overhead", "512m", nil, memTooSmall, "Use at least 577m"},
		{"lowered overhead min", "512m", map[string]string{"jobmanager.memory.jvm-overhead.min": "32m"}, memOK, ""},
		{"lowered metaspace and overhead", "400m", map[string]string{"jobmanager.memory.jvm-overhead.min": "32m", "jobmanager.memory.jvm-metaspace.size": "128m"}, memOK, ""},
		{"raised overhead fraction", "700m", map[string]string{"jobmanager.memory.jvm-overhead.fraction": "0.5"}, memTooSmall, "Use at least 769m"},
		// A fixed heap bounds the process size on both sides: the overhead
		// is what remains, within [min, max].
		{"fixed heap, too large", "2048m", map[string]string{"jobmanager.memory.heap.size": "512m"}, memTooLarge, "Use between 1088m and 1920m"},
		{"fixed heap, too small", "1024m", map[string]string{"jobmanager.memory.heap.size": "512m"}, memTooSmall, "Use between 1088m and 1920m"},
		{"fixed heap, fits", "1500m", map[string]string{"jobmanager.memory.heap.size": "512m"}, memOK, ""},
		{"fixed total Flink memory", "1024m", map[string]string{"jobmanager.memory.flink.size": "700m"}, memTooSmall, "jobmanager.memory.jvm-overhead.min"},
		// Heap and total Flink memory: the off-heap is the rest, unless set.
		{"heap and total Flink memory", "2048m", map[string]string{"jobmanager.memory.heap.size": "512m", "jobmanager.memory.flink.size": "1g"}, memOK, ""},
		{"heap, off-heap and total Flink memory disagree", "2048m", map[string]string{"jobmanager.memory.heap.size": "512m", "jobmanager.memory.flink.size": "1g",
			"jobmanager.memory.off-heap.size": "128m"}, memInconsistent, "is not jobmanager.memory.flink.size"},
		{"heap above total Flink memory", "2048m", map[string]string{"jobmanager.memory.heap.size": "2g", "jobmanager.memory.flink.size": "1g"}, memInconsistent, "exceeds jobmanager.memory.flink.size"},
		{"overhead min above max", "2048m", map[string]string{"jobmanager.memory.jvm-overhead.min": "2g"}, memInconsistent, "min <= max"},
		{"overhead fraction of 1", "2048m", map[string]string{"jobmanager.memory.jvm-overhead.fraction": "1.0"}, memInconsistent, "fraction in [0, 1)"},
		{"unreadable metaspace", "2048m", map[string]string{"jobmanager.memory.jvm-metaspace.size": "lots"}, memBadKey, "Cannot read memory size"},
		// The TaskManager's keys do not touch the JobManager.
		{"TaskManager keys", "1024m", map[string]string{"taskmanager.memory.jvm-metaspace.size": "1g"}, memOK, ""},
		// Sizes the operator cannot read are the validator's (ValidateMemory).
		{"decimal", "1.5g", nil, memOK, ""},
	})
}

func TestTaskManagerMemory(t *testing.T) {
	runMemCases(t, "task_manager.memory", []memCase{
		// Defaults: metaspace 256m, overhead 192m, framework heap and
		// off-heap 128m each, network 64m minimum, managed 40% of the
		// Total Flink Memory.
		{"issue 36's size", "256m", nil, memTooSmall, "Use at least 982m"},
		{"names the parts", "512m", nil, memTooSmall, "framework heap 128 MiB (taskmanager.memory.framework.heap.size)"},
		{"one MiB below", "981m", nil, memTooSmall, "Use at least 982m"},
		{"smallest", "982m", nil, memOK, ""},
		{"tests' size", "1024m", nil, memOK, ""},
		{"guide's size", "2048m", nil, memOK, ""},
		{"Kubernetes quantity", "1Gi", nil, memOK, ""},
		{"raised metaspace", "1024m", map[string]string{"taskmanager.memory.jvm-metaspace.size": "512m"}, memTooSmall, "Use at least 1238m"},
		{"raised managed fraction", "1024m", map[string]string{"taskmanager.memory.managed.fraction": "0.7"}, memTooSmall, "Use at least 1728m"},
		{"fixed managed size", "1024m", map[string]string{"taskmanager.memory.managed.size": "1g"}, memTooSmall, "taskmanager.memory.managed.size"},
		{"deprecated managed key", "1024m", map[string]string{"taskmanager.memory.size": "1g"}, memTooSmall, "taskmanager.memory.managed.size"},
		{"deprecated network min key", "1024m", map[string]string{"taskmanager.network.memory.min": "256m"}, memTooSmall, "Use at least 1302m"},
		{"task off-heap", "1024m", map[string]string{"taskmanager.memory.task.off-heap.size": "300m"}, memTooSmall, "task off-heap 300 MiB"},
		// Lower fixed parts make a small size work.
		{"default 900m", "900m", nil, memTooSmall, "Use at least 982m"},
		{"lowered overhead", "900m", map[string]string{"taskmanager.memory.jvm-overhead.min": "64m", "taskmanager.memory.jvm-overhead.fraction": "0.05"}, memOK, ""},
		{"small TaskManager", "512m", map[string]string{"taskmanager.memory.framework.heap.size": "64m", "taskmanager.memory.framework.off-heap.size": "64m",
			"taskmanager.memory.jvm-metaspace.size": "96m", "taskmanager.memory.network.min": "16m", "taskmanager.memory.jvm-overhead.min": "32m"}, memOK, ""},
		// Fine-grained options fix the Total Flink Memory.
		{"task heap and managed, too large", "4096m", map[string]string{"taskmanager.memory.task.heap.size": "512m", "taskmanager.memory.managed.size": "256m"}, memTooLarge, "jvm-overhead.max"},
		{"task heap and managed, fits", "1700m", map[string]string{"taskmanager.memory.task.heap.size": "512m", "taskmanager.memory.managed.size": "256m"}, memOK, ""},
		{"total Flink memory", "1024m", map[string]string{"taskmanager.memory.flink.size": "1g"}, memTooSmall, "Use between"},
		{"task heap with network max", "8g", map[string]string{"taskmanager.memory.task.heap.size": "512m", "taskmanager.memory.network.max": "200m"}, memTooLarge, "taskmanager.memory.network.max"},
		{"network min above max", "2048m", map[string]string{"taskmanager.memory.network.min": "2g", "taskmanager.memory.network.max": "1g"}, memInconsistent, "min <= max"},
		{"unreadable fraction", "2048m", map[string]string{"taskmanager.memory.managed.fraction": "most"}, memBadKey, "is not a number"},
		// The legacy network buffers (Flink 1.20) are not modelled.
		{"legacy network buffers", "256m", map[string]string{"taskmanager.network.numberOfBuffers": "2048"}, memOK, ""},
	})
}

// The operator's reading of resource memory (FlinkConfigBuilder.parseResourceMemoryString):
// the values below were run through the operator's code path (Flink
// 1.20.1's MemorySize and fabric8 7.3.1's Quantity).
func TestParseResourceMemory(t *testing.T) {
	for s, want := range map[string]int64{
		"2048m": 2 << 30, "2g": 2 << 30, "1024 mb": 1 << 30, "2Gi": 2 << 30, "2gib": 2 << 30, "2GiB": 2 << 30, "2 Gi": 2 << 30,
		"2048M": 2 << 30, "2048": 2048, "1k": 1024, "2Ki": 2048, "2mib": 2 << 20, "512mebibytes": 512 << 20, "2tb": 2 << 40, "0": 0,
		"+2Gi": 2 << 30, "2P": 2_000_000_000_000_000,
	} {
		got, err := ParseResourceMemory(s)
		if err != nil || got != want {
			t.Errorf("ParseResourceMemory(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"1.5g", "1.5G", "1.5 gb", "1.5gib", "1.25Gi", "2.0g", "0.5g", "1.5", "1.5k", "-1Gi", "", "lots", "2 gigs", "-1g"} {
		if n, err := ParseResourceMemory(s); err == nil {
			t.Errorf("ParseResourceMemory(%q) = %d, want an error (the operator refuses it)", s, n)
		}
	}
	if msg := ValidateMemory("1.5g"); !strings.Contains(msg, "decimal point") {
		t.Errorf("ValidateMemory(1.5g) = %q, want the decimal point named", msg)
	}
}

// Derive reports both processes on their attributes, and a bad key on the key.
func TestMemoryFindings(t *testing.T) {
	in := Input{FlinkVersion: "2.2.1", Identity: "irsa", State: State{Backend: "hashmap", CheckpointDir: "s3://acme-flink-state/p/c"},
		JobManagerMemory: "256m", TaskManagerMemory: "512m", Extra: map[string]string{"taskmanager.memory.jvm-overhead.max": "big"}}
	_, fs := Derive(in)
	got := map[string]string{}
	for _, f := range fs {
		if f.Severity == Error {
			got[strings.Join(f.Path, ".")] = f.Summary
		}
	}
	for p, s := range map[string]string{"job_manager.memory": "JobManager memory too small", "flink_configuration.taskmanager.memory.jvm-overhead.max": "Invalid memory option"} {
		if got[p] != s {
			t.Errorf("finding on %s = %q, want %q (all: %v)", p, got[p], s, got)
		}
	}
	in.Extra = nil
	in.JobManagerMemory, in.TaskManagerMemory = "1024m", "1024m"
	_, fs = Derive(in)
	for _, f := range fs {
		if f.Severity == Error {
			t.Errorf("1024m for both: %+v", f)
		}
	}
}
