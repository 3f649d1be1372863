package flinkconf

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// Flink's memory model, checked at plan: job_manager.memory and
// task_manager.memory become jobmanager.memory.process.size and
// taskmanager.memory.process.size (flink-kubernetes-operator
// release-1.15.0, FlinkConfigBuilder.setResource), from which Flink derives
// every memory component (flink-runtime, util/config/memory:
// ProcessMemoryUtils, JobManagerFlinkMemoryUtils,
// TaskExecutorFlinkMemoryUtils). The operator derives both specs itself
// before it creates anything (NativeFlinkService.deployApplicationCluster ->
// KubernetesClusterClientFactory.getClusterSpecification, which calls
// JobManagerProcessUtils and TaskExecutorProcessUtils with the operator's
// own Flink, 1.20.1 in operator 1.15.0's pom.xml), and the JobManager
// derives the TaskManager's again with the image's Flink. A size that
// cannot hold the fixed parts throws IllegalConfigurationException there:
// the operator retries forever and no JobManager is created.
//
// The defaults below are the same in Flink 1.20.1, 2.0.0, 2.1.0 and 2.2.1
// (read from their JobManagerOptions and TaskManagerOptions by running
// each release's flink-core: every default and deprecated key agreed), so
// one table serves every version the provider supports. Note that
// taskmanager.memory.network.max defaults to Long.MAX_VALUE bytes (no cap),
// not 1g, in all four. The derivation below was compared with
// JobManagerProcessUtils and TaskExecutorProcessUtils of those four
// releases on 402 sizes and configurations (each bound, one byte either
// side): the verdicts agreed everywhere.

// memOption is one MemorySize option of Flink's memory model.
type memOption struct {
	Key        string
	Deprecated []string // older keys Flink still reads (withDeprecatedKeys)
	Default    int64    // bytes; -1 when the option has no default
	What       string   // the part it sizes, for messages
}

// fracOption is one fraction (float) option of Flink's memory model.
type fracOption struct {
	Key        string
	Deprecated []string
	Default    float32
	What       string
}

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// The JobManager's options (flink-core JobManagerOptions, 1.20.1 to 2.2.1).
var (
	jmMetaspace    = memOption{Key: "jobmanager.memory.jvm-metaspace.size", Default: 256 * mib, What: "JVM metaspace"} // JVM_METASPACE
	jmOverheadMin  = memOption{Key: "jobmanager.memory.jvm-overhead.min", Default: 192 * mib, What: "JVM overhead minimum"}
	jmOverheadMax  = memOption{Key: "jobmanager.memory.jvm-overhead.max", Default: gib, What: "JVM overhead maximum"}
	jmOverheadFrac = fracOption{Key: "jobmanager.memory.jvm-overhead.fraction", Default: 0.1, What: "JVM overhead fraction"}
	jmOffHeap      = memOption{Key: "jobmanager.memory.off-heap.size", Default: 128 * mib, What: "off-heap memory"} // OFF_HEAP_MEMORY
	jmHeap         = memOption{Key: "jobmanager.memory.heap.size", Default: -1, What: "JVM heap"}                   // JVM_HEAP_MEMORY
	jmFlink        = memOption{Key: "jobmanager.memory.flink.size", Default: -1, What: "total Flink memory"}        // TOTAL_FLINK_MEMORY
)

// The TaskManager's options (flink-core TaskManagerOptions, 1.20.1 to 2.2.1).
var (
	tmMetaspace    = memOption{Key: "taskmanager.memory.jvm-metaspace.size", Default: 256 * mib, What: "JVM metaspace"}
	tmOverheadMin  = memOption{Key: "taskmanager.memory.jvm-overhead.min", Default: 192 * mib, What: "JVM overhead minimum"}
	tmOverheadMax  = memOption{Key: "taskmanager.memory.jvm-overhead.max", Default: gib, What: "JVM overhead maximum"}
	tmOverheadFrac = fracOption{Key: "taskmanager.memory.jvm-overhead.fraction", Default: 0.1, What: "JVM overhead fraction"}
	tmFwHeap       = memOption{Key: "taskmanager.memory.framework.heap.size", Default: 128 * mib, What: "framework heap"}
	tmFwOffHeap    = memOption{Key: "taskmanager.memory.framework.off-heap.size", Default: 128 * mib, What: "framework off-heap"}
	tmTaskHeap     = memOption{Key: "taskmanager.memory.task.heap.size", Default: -1, What: "task heap"}
	tmTaskOffHeap  = memOption{Key: "taskmanager.memory.task.off-heap.size", Default: 0, What: "task off-heap"}
	tmManaged      = memOption{Key: "taskmanager.memory.managed.size", Deprecated: []string{"taskmanager.memory.size"}, Default: -1, What: "managed memory"}
	tmManagedFrac  = fracOption{Key: "taskmanager.memory.managed.fraction", Default: 0.4, What: "managed memory fraction"}
	tmNetworkMin   = memOption{Key: "taskmanager.memory.network.min", Deprecated: []string{"taskmanager.network.memory.min"}, Default: 64 * mib, What: "network memory minimum"}
	tmNetworkMax   = memOption{Key: "taskmanager.memory.network.max", Deprecated: []string{"taskmanager.network.memory.max"}, Default: math.MaxInt64, What: "network memory maximum"}
	tmNetworkFrac  = fracOption{Key: "taskmanager.memory.network.fraction", Deprecated: []string{"taskmanager.network.memory.fraction"}, Default: 0.1, What: "network memory fraction"}
	tmFlink        = memOption{Key: "taskmanager.memory.flink.size", Default: -1, What: "total Flink memory"}
	// NettyShuffleEnvironmentOptions.NETWORK_NUM_BUFFERS (1.20 only, removed
	// in 2.0): when set without the network options it sizes the network
	// memory in pages; the check then stays out of the way.
	tmLegacyNetworkBuffers = "taskmanager.network.numberOfBuffers"
)

// memConf reads memory options from flink_configuration as Flink's
// Configuration does: the key, then its deprecated keys.
type memConf struct {
	extra map[string]string
	bad   *badKey // the first value Flink could not read
}

// badKey is a flink_configuration value Flink cannot read.
type badKey struct{ key, val, why string }

func (c memConf) raw(key string, deprecated []string) (string, string, bool) {
	for _, k := range append([]string{key}, deprecated...) {
		if v, ok := c.extra[k]; ok {
			return k, v, true
		}
	}
	return "", "", false
}

func (c memConf) has(o memOption) bool { _, _, ok := c.raw(o.Key, o.Deprecated); return ok }

func (c memConf) size(o memOption) int64 {
	k, v, ok := c.raw(o.Key, o.Deprecated)
	if !ok {
		return o.Default
	}
	n, err := ParseFlinkMemory(v)
	if err != nil {
		if c.bad != nil && c.bad.key == "" {
			*c.bad = badKey{k, v, "is not a Flink memory size such as 256m or 1g (" + err.Error() + ")"}
		}
		return o.Default
	}
	return n
}

func (c memConf) fraction(o fracOption) float32 {
	k, v, ok := c.raw(o.Key, o.Deprecated)
	if !ok {
		return o.Default
	}
	f, err := parseJavaFloat(v)
	if err != nil {
		if c.bad != nil && c.bad.key == "" {
			*c.bad = badKey{k, v, "is not a number such as 0.1"}
		}
		return o.Default
	}
	return f
}

// parseJavaFloat reads a float as Java's Float.parseFloat does
// (ConfigurationUtils.convertToFloat): surrounding white space and a
// trailing f or d are allowed.
func parseJavaFloat(s string) (float32, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimRight(s, "fFdD")
	f, err := strconv.ParseFloat(s, 32)
	return float32(f), err
}

var flinkMemoryRE = regexp.MustCompile(`^(\d+)\s*([a-zA-Z]*)$`)

// flinkMemoryUnits are MemorySize.MemoryUnit's names (flink-core,
// case-insensitive; seen in MemorySize.parse's error message in 1.20.1).
var flinkMemoryUnits = map[string]int64{
	"": 1, "b": 1, "bytes": 1,
	"k": 1 << 10, "kb": 1 << 10, "kibibytes": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mebibytes": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gibibytes": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tebibytes": 1 << 40,
}

// ParseFlinkMemory parses a size as Flink's MemorySize.parse does: digits,
// optional white space, a unit (bytes when none).
func ParseFlinkMemory(s string) (int64, error) {
	m := flinkMemoryRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not digits followed by a unit", s)
	}
	unit, ok := flinkMemoryUnits[strings.ToLower(m[2])]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q (use b, k, m, g or t)", m[2])
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * unit, nil
}

// k8sQuantityRE is the part of Kubernetes' quantity syntax whose amount
// the operator can use: a whole number with a binary suffix, or P. (Flink
// reads plain digits and k/m/g/t itself first; a decimal point makes
// fabric8's Quantity.getNumericalAmount keep a scale, "1500000000.0" for
// 1.5G, which MemorySize.parse then refuses.)
var k8sQuantityRE = regexp.MustCompile(`^\+?(\d+)(Ki|Mi|Gi|Ti|Pi|P)?$`)

var k8sUnits = map[string]int64{"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "P": 1_000_000_000_000_000}

// ParseResourceMemory reads job_manager.memory and task_manager.memory as
// the operator does (flink-kubernetes-operator release-1.15.0,
// FlinkConfigBuilder.parseResourceMemoryString, checked by
// DefaultValidator.validateResources): Flink's MemorySize.parse ("2048m",
// "2g", "1024 mb"); when that fails, a Kubernetes quantity ("2Gi", "2gib":
// white space removed, upper-cased, a trailing B dropped and a trailing I
// written i), whose amount MemorySize.parse must read again. Decimals such
// as "1.5g" fail that second parse (the amount is "1500000000.0"), so the
// operator refuses them ("resource memory parse error").
func ParseResourceMemory(s string) (int64, error) {
	if n, err := ParseFlinkMemory(s); err == nil {
		return n, nil
	}
	q := strings.ToUpper(strings.Join(strings.Fields(s), ""))
	q = strings.TrimSuffix(q, "B")
	if strings.HasSuffix(q, "I") {
		q = q[:len(q)-1] + "i"
	}
	m := k8sQuantityRE.FindStringSubmatch(q)
	if m == nil {
		if strings.Contains(s, ".") {
			return 0, fmt.Errorf("has a decimal point, which the operator cannot read (1.5g becomes 1500000000.0, which Flink's MemorySize.parse refuses): use whole units, e.g. 1536m")
		}
		return 0, fmt.Errorf("is neither a Flink memory size (2048m, 2g, 1024 mb) nor a Kubernetes quantity (2Gi)")
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	unit := int64(1)
	if m[2] != "" {
		unit = k8sUnits[m[2]]
	}
	if err != nil || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("is too large")
	}
	return n * unit, nil
}

// multiply is MemorySize.multiply(double): exact decimal product of the
// size and the double's Double.toString digits (BigDecimal.valueOf),
// truncated to whole bytes.
func multiply(bytes int64, f float64) int64 {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok {
		return 0
	}
	r.Mul(r, new(big.Rat).SetInt64(bytes))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	if !q.IsInt64() {
		return math.MaxInt64
	}
	return q.Int64()
}

// rangeFraction is RangeFraction: min <= max and 0 <= fraction < 1.
type rangeFraction struct {
	min, max int64
	fraction float64
}

// capped is ProcessMemoryUtils.capToMinMax.
func (r rangeFraction) capped(v int64) int64 {
	if v > r.max {
		return r.max
	}
	if v < r.min {
		return r.min
	}
	return v
}

// withFraction is ProcessMemoryUtils.deriveWithFraction.
func (r rangeFraction) withFraction(base int64) int64 { return r.capped(multiply(base, r.fraction)) }

// withInverseFraction is ProcessMemoryUtils.deriveWithInverseFraction.
func (r rangeFraction) withInverseFraction(base int64) int64 {
	return r.capped(multiply(base, r.fraction/(1-r.fraction)))
}

// memFailure is why a process size does not work: too small (a larger
// size would do), too large, or a configuration no size can fix.
type memFailure struct {
	kind   int // tooSmall, tooLarge, inconsistent
	reason string
}

const (
	tooSmall = iota
	tooLarge
	inconsistent
)

// memPart is one component of a derived memory spec, for messages.
type memPart struct {
	what, key string
	bytes     int64
}

// processModel is one process's memory model (JobManager or TaskManager).
type processModel struct {
	name, attr, processKey          string
	metaspace, overheadMin, overMax memOption
	overheadFrac                    fracOption
	// derive is the FlinkMemoryUtils of the process: called with -1 it
	// returns the parts the configuration alone fixes (fine-grained or
	// total Flink memory options set; nil when it fixes none); called with
	// the Total Flink Memory left by the process size, it derives the parts
	// from that (deriveFromTotalFlinkMemory).
	derive func(c memConf, totalFlink int64) ([]memPart, *memFailure)
}

func sizeOf(b int64) string {
	switch {
	case b == math.MaxInt64:
		return "unlimited"
	case b%gib == 0 && b != 0:
		return fmt.Sprintf("%d GiB", b/gib)
	case b%mib == 0:
		return fmt.Sprintf("%d MiB", b/mib)
	case b >= mib:
		return fmt.Sprintf("%.1f MiB", float64(b)/float64(mib))
	}
	return fmt.Sprintf("%d bytes", b)
}

func (p processModel) overheadRange(c memConf) (rangeFraction, *memFailure) {
	r := rangeFraction{min: c.size(p.overheadMin), max: c.size(p.overMax), fraction: float64(c.fraction(p.overheadFrac))}
	if r.min > r.max || !(r.fraction >= 0 && r.fraction < 1) {
		return r, &memFailure{inconsistent, fmt.Sprintf("the JVM overhead range is inconsistent (%s %s, %s %s, %s %g): Flink needs min <= max "+
			"and a fraction in [0, 1) (RangeFraction)", p.overheadMin.Key, sizeOf(r.min), p.overMax.Key, sizeOf(r.max), p.overheadFrac.Key, float32(r.fraction))}
	}
	return r, nil
}

// spec is ProcessMemoryUtils.memoryProcessSpecFromConfig with the process
// size set: the JVM metaspace and overhead, around a
// Total Flink Memory that is either derived from the process size
// (deriveJvmMetaspaceAndOverheadWithTotalProcessMemory) or fixed by the
// configuration (deriveJvmOverheadFromTotalFlinkMemoryAndOtherComponents:
// the process size must then leave an overhead within its range).
func (p processModel) spec(c memConf, process int64) ([]memPart, *memFailure) {
	meta := c.size(p.metaspace)
	over, f := p.overheadRange(c)
	if f != nil {
		return nil, f
	}
	parts, f := p.derive(c, -1)
	if f != nil {
		return nil, f
	}
	if parts != nil { // the configuration fixes the Total Flink Memory
		total := int64(0)
		for _, x := range parts {
			total += x.bytes
		}
		if process < total+meta {
			return nil, &memFailure{tooSmall, "it is less than the Total Flink Memory the configuration fixes plus the JVM metaspace"}
		}
		o := process - total - meta
		if o < over.min {
			return nil, &memFailure{tooSmall, fmt.Sprintf("what it leaves for the JVM overhead is below %s (%s)", p.overheadMin.Key, sizeOf(over.min))}
		}
		if o > over.max {
			return nil, &memFailure{tooLarge, fmt.Sprintf("what it leaves for the JVM overhead is above %s (%s)", p.overMax.Key, sizeOf(over.max))}
		}
		return append([]memPart{{"JVM metaspace", p.metaspace.Key, meta}, {"JVM overhead", p.overheadKeys(), o}}, parts...), nil
	}
	o := over.withFraction(process)
	if meta+o > process {
		return nil, &memFailure{tooSmall, "the JVM metaspace and JVM overhead alone exceed it"}
	}
	parts, f = p.derive(c, process-meta-o)
	if f != nil {
		return nil, f
	}
	return append([]memPart{{"JVM metaspace", p.metaspace.Key, meta}, {"JVM overhead", p.overheadKeys(), o}}, parts...), nil
}

// overheadKeys names the options that size the JVM overhead.
func (p processModel) overheadKeys() string {
	return strings.TrimSuffix(p.overheadMin.Key, "min") + "min/max/fraction"
}

// networkKeys names the options that size the network memory.
const networkKeys = "taskmanager.memory.network.min/max/fraction"

// jobManagerModel: the JobManager's Total Flink Memory is heap plus
// off-heap; the fine-grained option is the heap (JobManagerProcessUtils,
// JobManagerFlinkMemoryUtils).
var jobManagerModel = processModel{
	name: "JobManager", attr: "job_manager.memory", processKey: "jobmanager.memory.process.size",
	metaspace: jmMetaspace, overheadMin: jmOverheadMin, overMax: jmOverheadMax, overheadFrac: jmOverheadFrac,
	derive: func(c memConf, total int64) ([]memPart, *memFailure) {
		off := c.size(jmOffHeap)
		switch {
		case c.has(jmHeap): // deriveFromRequiredFineGrainedOptions
			// With the total Flink memory too, an explicit off-heap must
			// add up (sanityCheckTotalFlinkMemory); without one the
			// off-heap is the rest (deriveOffHeapMemory, flink-runtime
			// 1.20.1 to 2.2.1).
			heap := c.size(jmHeap)
			if c.has(jmFlink) {
				fl := c.size(jmFlink)
				switch {
				case c.has(jmOffHeap) && heap+off != fl:
					return nil, &memFailure{inconsistent, fmt.Sprintf("%s (%s) plus %s (%s) is not %s (%s)", jmHeap.Key, sizeOf(heap), jmOffHeap.Key, sizeOf(off), jmFlink.Key, sizeOf(fl))}
				case fl < heap:
					return nil, &memFailure{inconsistent, fmt.Sprintf("%s (%s) exceeds %s (%s)", jmHeap.Key, sizeOf(heap), jmFlink.Key, sizeOf(fl))}
				}
				off = fl - heap
			}
			return []memPart{{"JVM heap", jmHeap.Key, heap}, {"off-heap", jmOffHeap.Key, off}}, nil
		case c.has(jmFlink):
			if total >= 0 {
				return nil, nil // fixed: spec() asked with -1 first
			}
			fl := c.size(jmFlink)
			if fl <= off {
				return nil, &memFailure{inconsistent, fmt.Sprintf("%s (%s) is not more than %s (%s)", jmFlink.Key, sizeOf(fl), jmOffHeap.Key, sizeOf(off))}
			}
			return []memPart{{"JVM heap", jmFlink.Key, fl - off}, {"off-heap", jmOffHeap.Key, off}}, nil
		}
		if total < 0 {
			return nil, nil // derived from the process size
		}
		// deriveFromTotalFlinkMemory: "The configured Total Flink Memory
		// (%s) is less than the configured Off-heap Memory (%s)" when not
		// more than the off-heap.
		if total <= off {
			return nil, &memFailure{tooSmall, fmt.Sprintf("what is left after the JVM metaspace and overhead is not more than the off-heap memory (%s)", sizeOf(off))}
		}
		return []memPart{{"off-heap", jmOffHeap.Key, off}, {"JVM heap", "", total - off}}, nil
	},
}

// taskManagerModel: the TaskManager's Total Flink Memory is framework heap
// and off-heap, task heap and off-heap, network and managed memory; the
// fine-grained options are the task heap and managed size
// (TaskExecutorProcessUtils, TaskExecutorFlinkMemoryUtils).
var taskManagerModel = processModel{
	name: "TaskManager", attr: "task_manager.memory", processKey: "taskmanager.memory.process.size",
	metaspace: tmMetaspace, overheadMin: tmOverheadMin, overMax: tmOverheadMax, overheadFrac: tmOverheadFrac,
	derive: tmDerive,
}

func tmNetworkRange(c memConf) (rangeFraction, *memFailure) {
	r := rangeFraction{min: c.size(tmNetworkMin), max: c.size(tmNetworkMax), fraction: float64(c.fraction(tmNetworkFrac))}
	if r.min > r.max || !(r.fraction >= 0 && r.fraction < 1) {
		return r, &memFailure{inconsistent, fmt.Sprintf("the network memory range is inconsistent (%s %s, %s %s, %s %g): Flink needs min <= max "+
			"and a fraction in [0, 1) (RangeFraction)", tmNetworkMin.Key, sizeOf(r.min), tmNetworkMax.Key, sizeOf(r.max), tmNetworkFrac.Key, float32(r.fraction))}
	}
	return r, nil
}

func tmManagedOf(c memConf, total int64) (int64, *memFailure) {
	if c.has(tmManaged) {
		return c.size(tmManaged), nil
	}
	f := float64(c.fraction(tmManagedFrac))
	if !(f >= 0 && f < 1) {
		return 0, &memFailure{inconsistent, fmt.Sprintf("%s (%g) must be in [0, 1) (RangeFraction)", tmManagedFrac.Key, float32(f))}
	}
	return rangeFraction{0, math.MaxInt64, f}.withFraction(total), nil
}

func tmDerive(c memConf, total int64) ([]memPart, *memFailure) {
	fwHeap, fwOff, taskOff := c.size(tmFwHeap), c.size(tmFwOffHeap), c.size(tmTaskOffHeap)
	net, f := tmNetworkRange(c)
	if f != nil {
		return nil, f
	}
	fixed := []memPart{{"framework heap", tmFwHeap.Key, fwHeap}, {"framework off-heap", tmFwOffHeap.Key, fwOff}, {"task off-heap", tmTaskOffHeap.Key, taskOff}}
	sum := func(ps []memPart) int64 {
		s := int64(0)
		for _, p := range ps {
			s += p.bytes
		}
		return s
	}
	if c.has(tmTaskHeap) && c.has(tmManaged) { // deriveFromRequiredFineGrainedOptions
		if total >= 0 {
			return nil, nil
		}
		parts := append(fixed, memPart{"task heap", tmTaskHeap.Key, c.size(tmTaskHeap)}, memPart{"managed memory", tmManaged.Key, c.size(tmManaged)})
		if c.has(tmFlink) {
			fl := c.size(tmFlink)
			if sum(parts) > fl {
				return nil, &memFailure{inconsistent, fmt.Sprintf("the configured parts exceed %s (%s)", tmFlink.Key, sizeOf(fl))}
			}
			n := fl - sum(parts)
			if n < net.min || n > net.max {
				return nil, &memFailure{inconsistent, fmt.Sprintf("the network memory left inside %s (%s) is outside [%s, %s]", tmFlink.Key, sizeOf(n), sizeOf(net.min), sizeOf(net.max))}
			}
			return append(parts, memPart{"network memory", networkKeys, n}), nil
		}
		return append(parts, memPart{"network memory", networkKeys, net.withInverseFraction(sum(parts))}), nil
	}
	if c.has(tmFlink) {
		if total >= 0 {
			return nil, nil
		}
		parts, f := tmFromTotal(c, c.size(tmFlink), fixed, net)
		if f != nil {
			f.kind = inconsistent
			f.reason = strings.Replace(f.reason, "what is left after the JVM metaspace and overhead", tmFlink.Key+" ("+sizeOf(c.size(tmFlink))+")", 1)
		}
		return parts, f
	}
	if total < 0 {
		return nil, nil
	}
	return tmFromTotal(c, total, fixed, net)
}

// tmFromTotal is TaskExecutorFlinkMemoryUtils.deriveFromTotalFlinkMemory.
func tmFromTotal(c memConf, total int64, fixed []memPart, net rangeFraction) ([]memPart, *memFailure) {
	managed, f := tmManagedOf(c, total)
	if f != nil {
		return nil, f
	}
	managedKey := tmManagedFrac.Key
	if c.has(tmManaged) {
		managedKey = tmManaged.Key
	}
	s := int64(0)
	for _, p := range fixed {
		s += p.bytes
	}
	if c.has(tmTaskHeap) {
		heap := c.size(tmTaskHeap)
		s += heap + managed
		if s > total {
			return nil, &memFailure{tooSmall, "what is left after the JVM metaspace and overhead cannot hold the configured parts"}
		}
		n := total - s
		if n < net.min {
			return nil, &memFailure{tooSmall, fmt.Sprintf("the network memory left (%s) is below %s (%s)", sizeOf(n), tmNetworkMin.Key, sizeOf(net.min))}
		}
		if n > net.max {
			return nil, &memFailure{tooLarge, fmt.Sprintf("the network memory left (%s) is above %s (%s)", sizeOf(n), tmNetworkMax.Key, sizeOf(net.max))}
		}
		return append(fixed, memPart{"task heap", tmTaskHeap.Key, heap}, memPart{"managed memory", managedKey, managed}, memPart{"network memory", networkKeys, n}), nil
	}
	n := net.withFraction(total)
	s += managed + n
	if s > total {
		return nil, &memFailure{tooSmall, "what is left after the JVM metaspace and overhead cannot hold the framework, task off-heap, managed and network memory"}
	}
	return append(fixed, memPart{"managed memory", managedKey, managed}, memPart{"network memory", networkKeys, n}, memPart{"task heap", "", total - s}), nil
}

// searchBound finds the smallest (or largest) process size that does not
// fail as too small (too large) by bisection: the parts grow with the
// process size.
func (p processModel) searchBound(c memConf, smallest bool) int64 {
	lo, hi := int64(0), int64(1)<<50 // 1 PiB
	failsAs := func(x int64) bool {
		_, f := p.spec(c, x)
		if smallest {
			return f != nil && f.kind == tooSmall
		}
		return f == nil || f.kind != tooLarge
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if failsAs(mid) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if smallest {
		return lo
	}
	return lo - 1
}

// Kinds of memory findings (memoryRules names each).
const (
	memOK = iota
	memBadKey
	memInconsistent
	memTooSmall
	memTooLarge
)

// memReport is what check found about one process's memory.
type memReport struct {
	kind          int
	key, keyValue string // memBadKey: the flink_configuration key and its value
	why           string // the reason, a clause
	size          string // the process size, e.g. "256 MiB"
	bound         string // "at least 577m" or "between 1088m and 1920m"
	parts         string // what Flink takes at the bound, a sentence or ""
}

// memRetry says why a failing memory configuration never runs.
const memRetry = "Flink would refuse it at deploy (IllegalConfigurationException from ProcessMemoryUtils, which the operator runs " +
	"before it creates anything), so the operator would retry forever and never create the JobManager."

// check says what is wrong with a process's memory.
func (p processModel) check(value string, extra map[string]string) memReport {
	process, err := ParseResourceMemory(value)
	if err != nil {
		return memReport{} // the attribute's validator reports it
	}
	if _, ok := extra[tmLegacyNetworkBuffers]; ok && p.name == "TaskManager" {
		return memReport{}
	}
	bad := &badKey{}
	c := memConf{extra: extra, bad: bad}
	_, f := p.spec(c, process)
	if bad.key != "" {
		return memReport{kind: memBadKey, key: bad.key, keyValue: bad.val, why: bad.why}
	}
	if f == nil {
		return memReport{}
	}
	r := memReport{why: f.reason, size: sizeOf(process)}
	switch f.kind {
	case inconsistent:
		r.kind = memInconsistent
		return r
	case tooLarge:
		r.kind = memTooLarge
	default:
		r.kind = memTooSmall
	}
	lo, hi := p.searchBound(c, true), p.searchBound(c, false)
	minM := (lo + mib - 1) / mib
	r.bound = fmt.Sprintf("at least %dm", minM)
	if hi < int64(1)<<50-1 {
		r.bound = fmt.Sprintf("between %dm and %dm", minM, hi/mib)
	}
	partsAt, _ := p.spec(c, minM*mib)
	var desc []string
	rest := ""
	for _, x := range partsAt {
		switch {
		case x.key == "":
			rest = fmt.Sprintf(", leaving %s of %s", sizeOf(x.bytes), x.what)
		case x.bytes > 0:
			desc = append(desc, fmt.Sprintf("%s %s (%s)", x.what, sizeOf(x.bytes), x.key))
		}
	}
	if len(desc) > 0 {
		r.parts = fmt.Sprintf(" At %dm Flink takes %s%s.", minM, strings.Join(desc, ", "), rest)
	}
	if p.name == "JobManager" {
		// JobManagerFlinkMemoryUtils.verifyJvmHeapSize only logs a warning
		// below JobManagerOptions.MIN_JVM_HEAP_SIZE (128 MiB in 1.20.1 to 2.2.1).
		r.parts += " That is Flink's limit: a JobManager wants at least 128 MiB of JVM heap (JobManagerOptions.MIN_JVM_HEAP_SIZE, below which Flink warns)."
	}
	return r
}

// memoryRules checks job_manager.memory and task_manager.memory against
// Flink's memory model, with the flink_configuration keys that change it.
// The attribute is named with its value and the process size option it
// becomes; a too small or too large size with the sizes that work.
func memoryRules(in Input, add func(Severity, string, string, ...string)) {
	if v := in.JobManagerMemory; v != "" {
		switch r := jobManagerModel.check(v, in.Extra); r.kind {
		case memBadKey:
			add(Error, "Invalid memory option", fmt.Sprintf("flink_configuration: the value %q of %q %s: Flink would refuse the JobManager's "+
				"memory configuration at deploy (ProcessMemoryUtils.getMemorySizeFromConfig: \"Cannot read memory size from config option\").",
				r.keyValue, r.key, r.why), "flink_configuration", r.key)
		case memInconsistent:
			add(Error, "JobManager memory options inconsistent", fmt.Sprintf("job_manager.memory %q (jobmanager.memory.process.size) cannot work "+
				"with this flink_configuration: %s. "+memRetry+" Fix the flink_configuration keys.", v, r.why), "job_manager", "memory")
		case memTooSmall:
			add(Error, "JobManager memory too small", fmt.Sprintf("job_manager.memory %q (jobmanager.memory.process.size = %s) is too small "+
				"for Flink's memory model with this flink_configuration: %s. "+memRetry+" Use %s.%s", v, r.size, r.why, r.bound, r.parts),
				"job_manager", "memory")
		case memTooLarge:
			add(Error, "JobManager memory too large for its options", fmt.Sprintf("job_manager.memory %q (jobmanager.memory.process.size = %s) "+
				"is too large for the JobManager memory this flink_configuration fixes: %s. "+memRetry+" Use %s.%s", v, r.size, r.why, r.bound, r.parts),
				"job_manager", "memory")
		}
	}
	if v := in.TaskManagerMemory; v != "" {
		switch r := taskManagerModel.check(v, in.Extra); r.kind {
		case memBadKey:
			add(Error, "Invalid memory option", fmt.Sprintf("flink_configuration: the value %q of %q %s: Flink would refuse the TaskManager's "+
				"memory configuration at deploy (ProcessMemoryUtils.getMemorySizeFromConfig: \"Cannot read memory size from config option\").",
				r.keyValue, r.key, r.why), "flink_configuration", r.key)
		case memInconsistent:
			add(Error, "TaskManager memory options inconsistent", fmt.Sprintf("task_manager.memory %q (taskmanager.memory.process.size) cannot work "+
				"with this flink_configuration: %s. "+memRetry+" Fix the flink_configuration keys.", v, r.why), "task_manager", "memory")
		case memTooSmall:
			add(Error, "TaskManager memory too small", fmt.Sprintf("task_manager.memory %q (taskmanager.memory.process.size = %s) is too small "+
				"for Flink's memory model with this flink_configuration: %s. "+memRetry+" Use %s.%s", v, r.size, r.why, r.bound, r.parts),
				"task_manager", "memory")
		case memTooLarge:
			add(Error, "TaskManager memory too large for its options", fmt.Sprintf("task_manager.memory %q (taskmanager.memory.process.size = %s) "+
				"is too large for the TaskManager memory this flink_configuration fixes: %s. "+memRetry+" Use %s.%s", v, r.size, r.why, r.bound, r.parts),
				"task_manager", "memory")
		}
	}
}
