package asof

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

// trickyKeys are text keys a wrong short-key table would confuse: keys
// equal but for their length (trailing zero bytes), their last byte, or a
// zero byte inside, on both sides of the 8- and 16-byte word boundaries
// and beyond shortKey; pairs that concatenate alike ("ab" "c" and "a"
// "bc") for the multi-key encoding.
var trickyKeys = func() []string {
	keys := []string{"", "\x00", "\x00\x00", "a", "a\x00", "\x00a", "ab", "b", "c", "bc", "abc", "a\x00b"}
	for _, n := range []int{7, 8, 9, 15, 16, 17, 24} {
		base := strings.Repeat("x", n-1)
		keys = append(keys, base+"a", base+"b", base+"\x00", "\x00"+base, base[:n/2]+"\x00"+base[n/2:])
	}
	keys = append(keys, "SYM0000000000001", "SYM0000000000002", "SYM000000000001", "SYM00000000000001")
	return keys
}()

// collisionHooks force collisions of the key hashes: by a hook that hashes
// every key alike (the lookups' general path), and by clearing bits of the
// real hashes (their written-out loop too): all of them (every key in one
// group, with one tag), the tag's (groups differ) or the group's (tags
// differ).
var collisionHooks = []struct {
	name  string
	hash  func([]byte) uint64
	clear uint64
}{
	{name: "real"},
	{name: "hook one hash", hash: func([]byte) uint64 { return 42 }},
	{name: "hook one tag", hash: func(b []byte) uint64 { return uint64(len(b)) << 58 }},
	{name: "no hash", clear: ^uint64(0)},
	{name: "no tag", clear: 0xffff},
	{name: "no group", clear: ^uint64(0xffff)},
}

// TestWordsAt: a short key's words are the same read in place from a
// longer buffer (whatever bytes follow it) and copied out at a buffer's
// end, and (words, length) tells every two different keys apart.
func TestWordsAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[keyWords]string{}
	for _, k := range trickyKeys {
		if len(k) > shortKey {
			continue
		}
		exact := []byte(k)
		w0, w1 := wordsAt(exact, 0, len(exact))
		for pad := 1; pad <= 2*shortKey; pad++ {
			buf := make([]byte, 3+len(k)+pad)
			for i := range buf {
				buf[i] = byte(rng.Uint32())
			}
			copy(buf[3:], k)
			g0, g1 := wordsAt(buf, 3, len(k))
			require.Equal(t, [2]uint64{w0, w1}, [2]uint64{g0, g1}, "key %q, %d bytes after it", k, pad)
		}
		w := keyWords{w0: w0, w1: w1, n: int32(len(k))}
		if prev, ok := seen[w]; ok {
			t.Fatalf("keys %q and %q have the same words", prev, k)
		}
		seen[w] = k
	}
}

// TestTextKeyTable interns the tricky keys under every collision hook and
// finds each again, one at a time and in batches read from sliced arrays
// (keys at a buffer's end included), with absent and NULL rows.
func TestTextKeyTable(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, hook := range collisionHooks {
		t.Run(hook.name, func(t *testing.T) {
			d := newKeyDict(false, &Options{hashBytes: hook.hash, hashClear: hook.clear})
			present := trickyKeys[:len(trickyKeys)-7]
			absent := trickyKeys[len(trickyKeys)-7:]
			// Intern the present keys through a batch, twice over.
			sb := array.NewStringBuilder(mem)
			for _, k := range append(append([]string{}, present...), present...) {
				sb.Append(k)
			}
			all := sb.NewArray()
			defer all.Release()
			sch := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
			enc, _, err := newKeyEncoding(sch, sch, []int{0}, []int{0}, nil, "l", "r")
			require.NoError(t, err)
			var kb keyBatch
			defer kb.free()
			enc.encode([]arrow.Array{all}, all.Len(), &kb)
			ids := make([]int32, all.Len())
			d.intern(&kb, ids)
			want := map[string]int32{}
			for i, k := range present {
				require.Equal(t, ids[i], ids[i+len(present)], "key %q", k)
				for k2, id := range want {
					require.NotEqual(t, id, ids[i], "keys %q and %q share an id", k, k2)
				}
				want[k] = ids[i]
			}
			require.Equal(t, len(present), d.len())
			// Look up mixed batches: every slice of a random sequence.
			rng := rand.New(rand.NewPCG(3, 4))
			var seq []*string
			for range 300 {
				switch r := rng.IntN(10); {
				case r == 0:
					seq = append(seq, nil)
				case r < 3:
					seq = append(seq, &absent[rng.IntN(len(absent))])
				default:
					seq = append(seq, &present[rng.IntN(len(present))])
				}
			}
			for _, k := range seq {
				if k == nil {
					sb.AppendNull()
				} else {
					sb.Append(*k)
				}
			}
			arr := sb.NewArray()
			defer arr.Release()
			sb.Release()
			for from := 0; from < len(seq); from += 1 + rng.IntN(40) {
				to := from + rng.IntN(len(seq)-from+1)
				sl := array.NewSlice(arr, int64(from), int64(to))
				n := to - from
				enc.encode([]arrow.Array{sl}, n, &kb)
				got := make([]int32, n)
				d.lookupAll(&kb, got)
				for i := range got {
					exp := int32(-1)
					if k := seq[from+i]; k != nil {
						if id, ok := want[*k]; ok {
							exp = id
						}
					}
					require.Equal(t, exp, got[i], "row %d of [%d, %d)", i, from, to)
				}
				sl.Release()
			}
		})
	}
}

// TestTextKeyShapes runs random text-keyed joins (one or two keys, the
// cases of TestDifferential that have text keys) on the tricky keys, under
// every collision hook, against the reference.
func TestTextKeyShapes(t *testing.T) {
	n := 600 // about 200 text-keyed cases per hook
	if testing.Short() {
		n = 150
	}
	for hi, hook := range collisionHooks {
		t.Run(hook.name, func(t *testing.T) {
			t.Parallel()
			for seed := uint64(1); seed <= uint64(n); seed++ {
				g := randomCase(seed*4 + uint64(hi))
				if g.keys == 0 || !g.strKey {
					continue
				}
				rng := rand.New(rand.NewPCG(seed, 5))
				// A few keys per case, so that rows share them.
				for range 2 + rng.IntN(5) {
					g.keyPool = append(g.keyPool, trickyKeys[rng.IntN(len(trickyKeys))])
				}
				g.hashBytes, g.hashClear = hook.hash, hook.clear
				checkCase(t, g)
				if t.Failed() {
					t.Logf("keys %s", fmt.Sprintf("%q", g.keyPool))
					return
				}
			}
		})
	}
}
