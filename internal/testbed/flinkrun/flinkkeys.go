package flinkrun

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The jars of each Flink version the provider accepts, for the check that
// every key it derives is one of that version's ConfigOptions and every
// class it names loads from that version's jars (tools/flinkkeys/pom.xml,
// TestRealFlink_derivedKeysAreFlinks). Maven brings them into the cache;
// ConfigKeys (tools/flink) lists what they declare, in one JVM per version,
// and its answer is cached too, so a warm run starts no JVM.

// KeyJars pins the jars checked for one Flink version. Flink's own modules
// (flink-core, flink-runtime, flink-streaming-java, flink-clients,
// flink-statebackend-rocksdb) are served at every version the provider
// accepts; flink-kubernetes, flink-s3-fs-hadoop and
// flink-statebackend-forst are served to these machines only at some
// versions, and where the version's own is not, the entry names the
// served one used and Notes says why it may stand in (and where it may not).
type KeyJars struct {
	Flink      string // flink-core and the other modules flink-dist bundles
	Kubernetes string // flink-kubernetes: KubernetesHaServicesFactory
	S3         string // flink-s3-fs-hadoop: the fs.s3a.* keys and the credentials classes
	ForSt      string // flink-statebackend-forst: ForStOptions; "" where none is served
	Notes      []string
}

// FlinkKeyJars are the pinned jars, one entry per minor the provider accepts
// (flinkconf.ReleasedVersions), at its newest patch.
var FlinkKeyJars = map[string]KeyJars{
	"1.20.5": {Flink: "1.20.5", Kubernetes: "1.20.0", S3: "1.20.0", Notes: []string{
		"flink-kubernetes and flink-s3-fs-hadoop 1.20.5 are not served here; 1.20.0 is, and stands in only where it is the same code: " +
			"no derived key is a flink-kubernetes option (its options are not scanned; the jar is checked for the class high-availability.type names), and the " +
			"fs.s3a.* keys come from the plugin's Hadoop, 3.3.4 in both (flink-filesystems/pom.xml fs.hadoopshaded.version). " +
			"The plugin's AWS SDK differs: 1.20.0 bundles aws-java-sdk-core 1.12.319 (its NOTICE), later 1.20 releases 1.12.779 " +
			"(FLINK-36643, flink-filesystems/pom.xml fs.s3.aws.version at release-1.20.4), so the credentials classes are checked " +
			"in 1.20.0's older SDK only",
		"ForSt: the provider refuses it before Flink 2.0 (flinkconf.Derive), so no ForSt jar is checked",
	}},
	"2.0.2": {Flink: "2.0.2", Kubernetes: "2.0.0", S3: "2.0.0", ForSt: "2.0.0", Notes: []string{
		"flink-kubernetes, flink-s3-fs-hadoop and flink-statebackend-forst 2.0.2 are not served here; 2.0.0 is: no derived key is " +
			"a flink-kubernetes option (its options are not scanned), the 2.0.0 plugin bundles Hadoop 3.3.4 and AWS SDK 1.12.779 (its NOTICE) " +
			"as release-2.0.2-rc4's flink-filesystems/pom.xml says (fs.hadoopshaded.version, fs.s3.aws.version), and ForStOptions.java (state.backend.forst.local-dir) is the same blob (8a816e3) at release-2.0.2-rc4, " +
			"release-2.1.2-rc1 and release-2.2.1-rc3",
	}},
	"2.1.3": {Flink: "2.1.3", Kubernetes: "2.1.0", S3: "2.1.0", Notes: []string{
		"flink-kubernetes and flink-s3-fs-hadoop 2.1.3 are not served here; 2.1.0 is: no derived key is a flink-kubernetes option " +
			"(its options are not scanned), the 2.1.0 plugin bundles Hadoop 3.3.4 and AWS SDK 1.12.779 (its NOTICE) as release-2.1.2-rc1's " +
			"flink-filesystems/pom.xml says (fs.hadoopshaded.version, fs.s3.aws.version)",
		"flink-statebackend-forst is served at no 2.1 release: state.backend.forst.local-dir is not checked against a 2.1 jar " +
			"(ForStOptions.java is the same blob, 8a816e3, at release-2.0.2-rc4, release-2.1.2-rc1 and release-2.2.1-rc3, " +
			"and the 2.0.0 and 2.2.0 jars declare the key)",
	}},
	"2.2.1": {Flink: "2.2.1", Kubernetes: "2.2.0", S3: "2.2.0", ForSt: "2.2.0", Notes: []string{
		"flink-kubernetes, flink-s3-fs-hadoop and flink-statebackend-forst 2.2.1 are not served here; 2.2.0 is, with the same " +
			"Java sources (tools/flink/pom.xml; flink-kubernetes' options are not scanned all the same) and the same ForStOptions.java " +
			"(blob 8a816e3 at release-2.2.1-rc3)",
	}},
}

// FlinkVersionKnows is what one Flink version's jars declare (FlinkKnows),
// the pinned jars it came from, and where they are.
type FlinkVersionKnows struct {
	FlinkKnows
	Jars           KeyJars
	Lib            string // the directory of the version's lib/ jars
	KubernetesJar  string
	PluginJar      string // the flink-s3-fs-hadoop jar of Jars.S3
	HasForSt       bool
	OptionsScanned []string // the jars whose ConfigOptions were listed
}

// KnowsVersion brings the pinned jars of version into the cache (once, by
// Maven) and lists what they declare (once, by ConfigKeys from the test
// job's jar), checking the given classes against the version's S3 plugin.
func KnowsVersion(ctx context.Context, root string, dist FlinkDist, version string, classes []string, logf func(string, ...any)) (FlinkVersionKnows, error) {
	jars, ok := FlinkKeyJars[version]
	if !ok {
		return FlinkVersionKnows{}, fmt.Errorf("testbed: no pinned jars for Flink %s (internal/testbed/flinkrun/flinkkeys.go, FlinkKeyJars)", version)
	}
	src := filepath.Join(root, "tools", "flinkkeys")
	key, err := treeKey(src)
	if err != nil {
		return FlinkVersionKnows{}, err
	}
	id := fmt.Sprintf("%s-k%s-s%s-f%s", jars.Flink, jars.Kubernetes, jars.S3, jars.ForSt)
	out := filepath.Join(cacheDir(root), "flinkkeys", key, id)
	if !fileExists(filepath.Join(out, "done")) {
		if err := fetchKeyJars(ctx, root, src, out, jars, logf); err != nil {
			return FlinkVersionKnows{}, err
		}
	}
	lib, err := filepath.Glob(filepath.Join(out, "lib", "*.jar"))
	if err != nil {
		return FlinkVersionKnows{}, err
	}
	k := FlinkVersionKnows{Jars: jars, Lib: filepath.Join(out, "lib")}
	for _, j := range lib {
		switch filepath.Base(j) {
		case "flink-kubernetes-" + jars.Kubernetes + ".jar":
			k.KubernetesJar = j
			if jars.Kubernetes != jars.Flink {
				// A stand-in: it stays on the class path, but its options
				// are not taken as the version's (no derived key is one).
				continue
			}
		case "flink-statebackend-forst-" + jars.ForSt + ".jar":
			k.HasForSt = true
		}
		k.OptionsScanned = append(k.OptionsScanned, j)
	}
	plugin := filepath.Join(out, "opt", "flink-s3-fs-hadoop-"+jars.S3+".jar")
	k.PluginJar = plugin
	// ConfigKeys' answer, per version of ConfigKeys (the test job's build)
	// and per set of classes asked about.
	answer := filepath.Join(out, fmt.Sprintf("knows2-%s-%s.txt", filepath.Base(filepath.Dir(dist.JobJar)), shortHash(strings.Join(classes, ","))))
	b, err := os.ReadFile(answer)
	if err != nil {
		cp := filepath.Join(out, "lib") + string(filepath.Separator) + "*" + string(filepath.ListSeparator) + dist.JobJar
		args := append([]string{"-cp", cp, "org.flinkstate.testjob.ConfigKeys", "--plugin", plugin, "--classes", strings.Join(classes, ",")}, k.OptionsScanned...)
		b, err = exec.CommandContext(ctx, dist.Java, args...).Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return k, fmt.Errorf("ConfigKeys over Flink %s: %w\n%s", version, err, ee.Stderr)
			}
			return k, err
		}
		if err := os.WriteFile(answer+".tmp", b, 0o644); err != nil {
			return k, err
		}
		if err := os.Rename(answer+".tmp", answer); err != nil {
			return k, err
		}
	}
	k.FlinkKnows = parseKnows(string(b))
	if len(k.Options) == 0 {
		return k, fmt.Errorf("ConfigKeys found no ConfigOption in Flink %s's jars (%s)", version, out)
	}
	return k, nil
}

// fetchKeyJars runs tools/flinkkeys with Maven into out (lib/, opt/).
func fetchKeyJars(ctx context.Context, root, src, out string, jars KeyJars, logf func(string, ...any)) error {
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return errors.New("testbed: fetching Flink's jars needs Maven (mvn) on PATH")
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	unlock, err := lockFile(out + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	if fileExists(filepath.Join(out, "done")) {
		return nil
	}
	if logf != nil {
		logf("fetching Flink %s's jars from tools/flinkkeys into %s (Maven; once)", jars.Flink, out)
	}
	tmp := fmt.Sprintf("%s.tmp%d", out, os.Getpid())
	_ = os.RemoveAll(tmp)
	defer os.RemoveAll(tmp)
	args := []string{"-B", "-q", "generate-resources",
		"-Dmaven.repo.local=" + filepath.Join(cacheDir(root), "m2"),
		"-Dflink.version=" + jars.Flink, "-Dflink.kubernetes.version=" + jars.Kubernetes, "-Dflink.s3.version=" + jars.S3,
		"-Dflinkkeys.out=" + tmp}
	if jars.ForSt != "" {
		args = append(args, "-Dflink.forst.version="+jars.ForSt)
	}
	cmd := exec.CommandContext(ctx, mvn, args...)
	cmd.Dir = src
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("fetching Flink %s's jars with Maven (tools/flinkkeys): %w\n%s", jars.Flink, err, b)
	}
	if err := os.WriteFile(filepath.Join(tmp, "done"), nil, 0o644); err != nil {
		return err
	}
	_ = os.RemoveAll(out)
	return os.Rename(tmp, out)
}

// BundledAWSSDK is the version of the AWS SDK for Java v1 a jar bundles,
// from the SDK's own com/amazonaws/sdk/versionInfo.properties (read by its
// VersionInfoUtils), or "" when it bundles none.
func BundledAWSSDK(jar string) (string, error) {
	r, err := zip.OpenReader(jar)
	if err != nil {
		return "", err
	}
	defer r.Close()
	f, err := r.Open("com/amazonaws/sdk/versionInfo.properties")
	if err != nil {
		return "", nil //nolint:nilerr // no SDK in the jar
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "version="); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("%s: versionInfo.properties names no version", jar)
}

// JarHasClass tells whether the jar holds the class file of name.
func JarHasClass(jar, name string) (bool, error) {
	r, err := zip.OpenReader(jar)
	if err != nil {
		return false, err
	}
	defer r.Close()
	want := strings.ReplaceAll(name, ".", "/") + ".class"
	for _, f := range r.File {
		if f.Name == want {
			return true, nil
		}
	}
	return false, nil
}
