package outline

import (
	"slices"
)

// References are counted without a parse: every identifier-like word of a
// file (comments and strings included) is a reference to whatever the
// workspace defines under that name. It is cheap, works for every language,
// and is enough to rank files.

// minRefLen is the shortest identifier counted as a reference or a
// definition: shorter names are too ambiguous to link files.
const minRefLen = 3

// nameHash is the 32-bit FNV-1a hash of a name.
func nameHash(b []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range b {
		h ^= uint32(c)
		h *= 16777619
	}
	return h
}

func nameHashString(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// identRefs returns the identifiers of src that are at least minRefLen
// bytes long, each once, as hash<<32 | count, sorted. A collision of two
// names in 32 bits only adds a little noise to a ranking.
func identRefs(src []byte) []uint64 {
	counts := make(map[uint32]uint32, 256)
	for i := 0; i < len(src); {
		c := src[i]
		if !isIdentStart(c) {
			i++
			if c >= '0' && c <= '9' { // skip the rest of a number
				for i < len(src) && isIdentByte(src[i]) {
					i++
				}
			}
			continue
		}
		j := i + 1
		for j < len(src) && isIdentByte(src[j]) {
			j++
		}
		if j-i >= minRefLen {
			counts[nameHash(src[i:j])]++
		}
		i = j
	}
	out := make([]uint64, 0, len(counts))
	for h, n := range counts {
		out = append(out, uint64(h)<<32|uint64(n))
	}
	slices.Sort(out)
	return out
}
