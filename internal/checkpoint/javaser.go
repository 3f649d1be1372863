package checkpoint

import (
	"strings"
)

// A version 4+ _metadata file ends with the job's CheckpointProperties,
// written by MetadataV4Serializer.serializeProperties as
// new ObjectOutputStream(dos).writeObject(properties): Java serialization
// (the Java Object Serialization Specification, "Object Serialization Stream
// Protocol", and java.io.ObjectStreamConstants). Flink reads it back with
// ObjectInputStream.readObject, which fails on a truncated or malformed
// stream; so the reader below walks the whole stream's grammar, to refuse
// what Flink would refuse, and keeps the few values worth reporting. It
// instantiates nothing and knows no classes beyond their names.

// CheckpointProperties is what a version 4+ _metadata says about the
// snapshot (Flink's CheckpointProperties and its SnapshotType).
type CheckpointProperties struct {
	// Type is the simple name of the snapshot type's class:
	// "CheckpointType" or "SavepointType".
	Type string
	// Name is the snapshot type's name, e.g. "Checkpoint", "Full
	// Checkpoint", "Savepoint", "Suspend Savepoint", "Terminate Savepoint".
	Name string
	// SavepointFormat is a savepoint's SavepointFormatType: "CANONICAL" or
	// "NATIVE"; "" for a checkpoint.
	SavepointFormat string
	// SharingFilesStrategy is a checkpoint's SnapshotType.
	// SharingFilesStrategy, e.g. "FORWARD_BACKWARD"; "" for a savepoint.
	SharingFilesStrategy string
}

// IsSavepoint tells whether the properties are a savepoint's.
func (p *CheckpointProperties) IsSavepoint() bool { return p != nil && p.Type == "SavepointType" }

// java.io.ObjectStreamConstants.
const (
	tcNull           = 0x70
	tcReference      = 0x71
	tcClassDesc      = 0x72
	tcObject         = 0x73
	tcString         = 0x74
	tcArray          = 0x75
	tcClass          = 0x76
	tcBlockData      = 0x77
	tcEndBlockData   = 0x78
	tcReset          = 0x79
	tcBlockDataLong  = 0x7a
	tcException      = 0x7b
	tcLongString     = 0x7c
	tcProxyClassDesc = 0x7d
	tcEnum           = 0x7e
	baseWireHandle   = 0x7e0000
	scWriteMethod    = 0x01
	scSerializable   = 0x02
	scExternalizable = 0x04
	scBlockData      = 0x08
	maxJavaDepth     = 32
)

type javaClassDesc struct {
	name   string
	flags  byte
	fields []javaField
	super  *javaClassDesc
}

type javaField struct {
	code byte // B C D F I J S Z, or [ L
	name string
}

type javaObject struct {
	class  string
	fields map[string]any // primitives as int64, objects as *javaObject, javaEnum or string
}

type javaEnum struct{ class, name string }

// javaReader walks a serialization stream with the metadata decoder's
// primitives (so its errors carry the file offset).
type javaReader struct {
	d       *metaDecoder
	handles []any // *javaClassDesc, *javaObject, javaEnum, string, or nil
	depth   int
}

// properties reads MetadataV4Serializer.serializeProperties's output: the
// stream header, one CheckpointProperties object, and nothing after.
func (d *metaDecoder) properties() {
	at := d.off
	// STREAM_MAGIC, STREAM_VERSION.
	if hdr := d.b[at:min(len(d.b), at+4)]; string(hdr) != "\xac\xed\x00\x05" {
		d.failAt(at, "a version %d file ends with Java-serialized CheckpointProperties (MetadataV4Serializer.serializeProperties), but here are %d bytes starting % x", d.version, len(d.b)-at, d.b[at:min(len(d.b), at+8)])
		return
	}
	d.off += 4
	j := &javaReader{d: d}
	objAt := d.off
	v := j.content()
	if d.err != nil {
		return
	}
	o, ok := v.(*javaObject)
	if !ok || o.class != "org.apache.flink.runtime.checkpoint.CheckpointProperties" {
		d.failAt(objAt, "the Java-serialized object after the operator states is not a CheckpointProperties")
		return
	}
	if d.left() > 0 {
		d.failAt(d.off, "%d bytes follow the CheckpointProperties", d.left())
		return
	}
	d.m.PropertiesSize = d.off - at
	p := &CheckpointProperties{}
	if t, ok := o.fields["checkpointType"].(*javaObject); ok {
		p.Type = t.class[strings.LastIndex(t.class, ".")+1:]
		p.Name, _ = t.fields["name"].(string)
		if e, ok := t.fields["formatType"].(javaEnum); ok {
			p.SavepointFormat = e.name
		}
		if e, ok := t.fields["sharingFilesStrategy"].(javaEnum); ok {
			p.SharingFilesStrategy = e.name
		}
	}
	d.m.Properties = p
}

func (j *javaReader) newHandle(v any) int {
	j.handles = append(j.handles, v)
	return len(j.handles) - 1
}

// content reads one "content" (an object, or block data, which is returned
// as nil) of the stream grammar.
func (j *javaReader) content() any {
	d := j.d
	at := d.off
	tc := d.u8("a Java serialization type code")
	if d.err != nil {
		return nil
	}
	if j.depth >= maxJavaDepth {
		d.failAt(at, "Java-serialized objects nested more than %d deep", maxJavaDepth)
		return nil
	}
	j.depth++
	defer func() { j.depth-- }()
	switch tc {
	case tcNull:
		return nil
	case tcReference:
		return j.reference(at)
	case tcClassDesc, tcProxyClassDesc:
		d.off = at
		return j.classDesc()
	case tcObject:
		return j.object()
	case tcString:
		h := j.newHandle(nil)
		s := d.utf("a Java string")
		j.handles[h] = s
		return s
	case tcLongString:
		h := j.newHandle(nil)
		n := d.i64("a Java long string's length")
		if d.err == nil && (n < 0 || n > int64(d.left())) {
			d.failAt(at, "a Java long string of %d bytes, %d left", n, d.left())
			return nil
		}
		s, bad := decodeModifiedUTF8(d.take(int(n), "a Java long string"))
		if bad >= 0 {
			d.failAt(at, "a Java long string is not valid modified UTF-8")
		}
		j.handles[h] = s
		return s
	case tcArray:
		j.array(at)
		return nil
	case tcClass:
		j.classDesc()
		j.newHandle(nil)
		return nil
	case tcEnum:
		desc := j.classDesc()
		h := j.newHandle(nil)
		nameAt := d.off
		name, ok := j.content().(string)
		if d.err == nil && !ok {
			d.failAt(nameAt, "a Java enum constant without a name")
		}
		e := javaEnum{name: name}
		if desc != nil {
			e.class = desc.name
		}
		j.handles[h] = e
		return e
	case tcBlockData:
		d.take(int(d.u8("a block data length")), "block data")
		return nil
	case tcBlockDataLong:
		d.take(d.count("a block data length", 1), "block data")
		return nil
	case tcReset:
		j.handles = j.handles[:0]
		return nil
	default:
		// TC_EXCEPTION (an exception during writing), TC_ENDBLOCKDATA out of
		// place, or not a type code at all.
		d.failAt(at, "Java serialization type code 0x%02x is not expected here", tc)
		return nil
	}
}

func (j *javaReader) reference(at int) any {
	d := j.d
	h := int64(d.i32("a Java handle")) - baseWireHandle
	if d.err != nil {
		return nil
	}
	if h < 0 || h >= int64(len(j.handles)) {
		d.failAt(at, "Java reference to handle 0x%x, which does not exist", h+baseWireHandle)
		return nil
	}
	return j.handles[h]
}

// classDesc reads a classDesc: a new (or proxy) class descriptor, a null,
// or a reference to an earlier one.
func (j *javaReader) classDesc() *javaClassDesc {
	d := j.d
	at := d.off
	// A descriptor's superclass descriptor follows it: count it as nesting,
	// or a long chain would recurse without bound.
	if j.depth >= maxJavaDepth {
		d.failAt(at, "Java-serialized objects nested more than %d deep", maxJavaDepth)
		return nil
	}
	j.depth++
	defer func() { j.depth-- }()
	switch tc := d.u8("a Java class descriptor"); {
	case d.err != nil:
		return nil
	case tc == tcNull:
		return nil
	case tc == tcReference:
		v := j.reference(at)
		desc, ok := v.(*javaClassDesc)
		if d.err == nil && !ok {
			d.failAt(at, "a Java reference that should name a class descriptor does not")
		}
		return desc
	case tc == tcClassDesc:
		// className, serialVersionUID, newHandle, classDescFlags, fields,
		// classAnnotation, superClassDesc.
		desc := &javaClassDesc{name: d.utf("a Java class name")}
		d.i64("a serialVersionUID")
		j.newHandle(desc)
		desc.flags = d.u8("the class flags")
		n := int(uint16(d.u8("the field count"))<<8 | uint16(d.u8("the field count")))
		for i := 0; i < n && d.err == nil; i++ {
			fat := d.off
			f := javaField{code: d.u8("a field type code"), name: d.utf("a field name")}
			switch f.code {
			case 'B', 'C', 'D', 'F', 'I', 'J', 'S', 'Z':
			case '[', 'L':
				if _, ok := j.content().(string); d.err == nil && !ok {
					d.failAt(fat, "the field %q has no type name", f.name)
				}
			default:
				d.failAt(fat, "Java field type code %q is unknown", f.code)
			}
			desc.fields = append(desc.fields, f)
		}
		j.annotation()
		desc.super = j.classDesc()
		return desc
	case tc == tcProxyClassDesc:
		// newHandle, interface count and names, annotation, super.
		desc := &javaClassDesc{name: "(proxy)", flags: scSerializable}
		j.newHandle(desc)
		n := d.count("the proxy interface count", 2)
		for i := 0; i < n && d.err == nil; i++ {
			d.utf("a proxy interface name")
		}
		j.annotation()
		desc.super = j.classDesc()
		return desc
	default:
		d.failAt(at, "Java serialization type code 0x%02x where a class descriptor should be", tc)
		return nil
	}
}

// annotation reads contents up to TC_ENDBLOCKDATA (classAnnotation,
// objectAnnotation).
func (j *javaReader) annotation() {
	d := j.d
	for d.err == nil {
		if d.left() > 0 && d.b[d.off] == tcEndBlockData {
			d.off++
			return
		}
		j.content()
	}
}

func (j *javaReader) object() *javaObject {
	d := j.d
	desc := j.classDesc()
	if d.err != nil {
		return nil
	}
	o := &javaObject{fields: map[string]any{}}
	if desc != nil {
		o.class = desc.name
	}
	j.newHandle(o)
	// classdata: each class of the hierarchy, the topmost superclass first.
	var chain []*javaClassDesc
	for c := desc; c != nil; c = c.super {
		if len(chain) == maxJavaDepth {
			d.failAt(d.off, "Java class %s has a hierarchy deeper than %d (or a cycle)", desc.name, maxJavaDepth)
			return nil
		}
		chain = append(chain, c)
	}
	for i := len(chain) - 1; i >= 0 && d.err == nil; i-- {
		c := chain[i]
		switch {
		case c.flags&scExternalizable != 0:
			if c.flags&scBlockData == 0 {
				d.failAt(d.off, "Java class %s is externalizable in the old protocol: its data cannot be walked", c.name)
				return nil
			}
			j.annotation()
		case c.flags&scSerializable != 0:
			for _, f := range c.fields {
				if d.err != nil {
					break
				}
				o.fields[f.name] = j.fieldValue(f.code)
			}
			if c.flags&scWriteMethod != 0 {
				j.annotation()
			}
		}
	}
	return o
}

func (j *javaReader) fieldValue(code byte) any {
	d := j.d
	switch code {
	case 'B', 'Z':
		return int64(d.u8("a byte field"))
	case 'C', 'S':
		return int64(d.u8("a short field"))<<8 | int64(d.u8("a short field"))
	case 'I', 'F':
		return int64(d.i32("an int field"))
	case 'J', 'D':
		return d.i64("a long field")
	default:
		return j.content()
	}
}

func (j *javaReader) array(at int) {
	d := j.d
	desc := j.classDesc()
	j.newHandle(nil)
	if d.err != nil {
		return
	}
	if desc == nil || len(desc.name) < 2 || desc.name[0] != '[' {
		d.failAt(at, "a Java array without an array class")
		return
	}
	size := map[byte]int{'B': 1, 'Z': 1, 'C': 2, 'S': 2, 'I': 4, 'F': 4, 'J': 8, 'D': 8}[desc.name[1]]
	if size > 0 {
		d.take(size*d.count("a Java array length", size), "a Java array")
		return
	}
	n := d.count("a Java array length", 1)
	for i := 0; i < n && d.err == nil; i++ {
		j.content()
	}
}
