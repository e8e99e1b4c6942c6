// Package gguf writes GGUF model files for tests: the container format
// (version 3: magic, key/value metadata, tensor infos, aligned F32 data) and
// two tiny llama-architecture models that llama.cpp's llama-server loads in
// milliseconds on a CPU.
//
//   - Random (random.go) has random weights: it loads, tokenizes, renders
//     its chat template, streams, fills slots and caches, overflows — every
//     path of the server that does not depend on what the model says. What
//     it says is noise, and it never calls a tool.
//   - ToolCaller (toolcaller.go) is wired by hand to call tools through the
//     server's real lazy grammar and chat parser: see its doc for what it can
//     and cannot drive.
//
// Both share one byte-level BPE vocabulary (vocab.go): the GPT-2 byte
// mapping, merges learned from Go source, ChatML's <|im_start|> and
// <|im_end|> as control tokens, and a ChatML chat template with
// Hermes-style <tool_call> blocks. The package is for tests only: nothing
// it writes is a useful language model.
package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// Alignment is the alignment of the tensor data (general.alignment's
// default).
const Alignment = 32

// Value types of GGUF metadata.
const (
	typeUint32  = 4
	typeInt32   = 5
	typeFloat32 = 6
	typeBool    = 7
	typeString  = 8
	typeArray   = 9
)

// tensorF32 is GGML's type id of 32-bit float tensors.
const tensorF32 = 0

// File is a GGUF file being assembled: metadata in the order added, then
// tensors in the order added.
type File struct {
	kvs     []kv
	tensors []Tensor
}

type kv struct {
	key string
	val any // uint32, int32, float32, bool, string, []string, []int32, []float32
}

// Tensor is one F32 tensor. Dims are GGML's ne: Dims[0] is the length of a
// row (the fastest-varying index), so a matrix that maps n inputs to m
// outputs is Dims {n, m} and Data[j*n+i] is its weight from input i to
// output j.
type Tensor struct {
	Name string
	Dims []uint64
	Data []float32
}

// Set adds a metadata key. Values are uint32, int32, float32, bool, string,
// []string, []int32 or []float32; anything else panics when written.
func (f *File) Set(key string, val any) { f.kvs = append(f.kvs, kv{key, val}) }

// Add adds a tensor; len(data) must be the product of dims.
func (f *File) Add(name string, data []float32, dims ...uint64) {
	n := uint64(1)
	for _, d := range dims {
		n *= d
	}
	if uint64(len(data)) != n {
		panic(fmt.Sprintf("gguf: tensor %s: %d values for dims %v", name, len(data), dims))
	}
	f.tensors = append(f.tensors, Tensor{Name: name, Dims: dims, Data: data})
}

// WriteFile writes the file to path atomically.
func (f *File) WriteFile(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".gguf-*")
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(tmp, 1<<20)
	err = f.Write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Write writes the file in GGUF version 3.
func (f *File) Write(w io.Writer) error {
	e := &encoder{w: w}
	e.raw([]byte("GGUF"))
	e.u32(3)
	e.u64(uint64(len(f.tensors)))
	e.u64(uint64(len(f.kvs)))
	for _, p := range f.kvs {
		e.str(p.key)
		e.value(p.key, p.val)
	}
	off := uint64(0)
	for _, t := range f.tensors {
		e.str(t.Name)
		e.u32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			e.u64(d)
		}
		e.u32(tensorF32)
		e.u64(off)
		off = align(off + 4*uint64(len(t.Data)))
	}
	e.pad()
	for _, t := range f.tensors {
		buf := make([]byte, 4*len(t.Data))
		for i, v := range t.Data {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
		}
		e.raw(buf)
		e.pad()
	}
	return e.err
}

func align(n uint64) uint64 { return (n + Alignment - 1) / Alignment * Alignment }

// encoder writes little-endian GGUF primitives, keeping the first error.
type encoder struct {
	w   io.Writer
	n   uint64
	err error
}

func (e *encoder) raw(b []byte) {
	if e.err != nil {
		return
	}
	n, err := e.w.Write(b)
	e.n += uint64(n)
	e.err = err
}

func (e *encoder) u32(v uint32) { e.raw(binary.LittleEndian.AppendUint32(nil, v)) }
func (e *encoder) u64(v uint64) { e.raw(binary.LittleEndian.AppendUint64(nil, v)) }

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	e.raw([]byte(s))
}

func (e *encoder) pad() {
	if r := e.n % Alignment; r != 0 {
		e.raw(make([]byte, Alignment-r))
	}
}

func (e *encoder) value(key string, v any) {
	switch x := v.(type) {
	case uint32:
		e.u32(typeUint32)
		e.u32(x)
	case int32:
		e.u32(typeInt32)
		e.u32(uint32(x))
	case float32:
		e.u32(typeFloat32)
		e.u32(math.Float32bits(x))
	case bool:
		e.u32(typeBool)
		if x {
			e.raw([]byte{1})
		} else {
			e.raw([]byte{0})
		}
	case string:
		e.u32(typeString)
		e.str(x)
	case []string:
		e.u32(typeArray)
		e.u32(typeString)
		e.u64(uint64(len(x)))
		for _, s := range x {
			e.str(s)
		}
	case []int32:
		e.u32(typeArray)
		e.u32(typeInt32)
		e.u64(uint64(len(x)))
		for _, n := range x {
			e.u32(uint32(n))
		}
	case []float32:
		e.u32(typeArray)
		e.u32(typeFloat32)
		e.u64(uint64(len(x)))
		for _, n := range x {
			e.u32(math.Float32bits(n))
		}
	default:
		panic(fmt.Sprintf("gguf: key %s: unsupported value type %T", key, v))
	}
}
