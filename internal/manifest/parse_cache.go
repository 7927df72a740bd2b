package manifest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/gantry-dev/gantry/internal/atomicfile"
)

// Parsing YAML costs about a third of a microsecond a byte: a stack of
// 10,000 components (790 KB) took a quarter of a second to parse on every
// command, the same file again and again. A file this large is parsed once
// per content: its tree is kept in a cache folder, in a binary form that
// reads back ten times faster, under the digest of the file's path, its
// bytes and the gantry binary that parsed it — once the command found its
// input valid (KeepParsedTrees). Small files are parsed: the cache would
// cost them more than it saves.

// cacheMinBytes is the size from which a file's tree is cached.
const cacheMinBytes = 64 << 10

// cacheKeep is how many trees the cache folder keeps; the least recently
// written go first.
const cacheKeep = 32

// cacheMagic starts a cached tree; the digest of its content follows.
const cacheMagic = "gantry-yaml-tree-1\n"

var parseCache struct {
	mu  sync.Mutex
	dir string
	// binary tells trees of different gantry builds apart: a build whose
	// parser changed must not read an older one's trees.
	binary string
	// pending are the trees parsed and not yet written, by path: they are
	// written when the command found its input valid (KeepParsedTrees),
	// since invalid input must leave nothing behind.
	pending map[string][]byte
}

// KeepParsedTrees writes the trees parsed since the last call into the
// cache: the command's input was valid.
func KeepParsedTrees() {
	parseCache.mu.Lock()
	pending := parseCache.pending
	parseCache.pending = nil
	parseCache.mu.Unlock()
	dirs := map[string]bool{}
	for path, tree := range pending {
		// The cache only saves work: a tree that cannot be kept is parsed
		// again next time.
		dir := filepath.Dir(path)
		if err := os.MkdirAll(dir, 0o700); err == nil && atomicfile.Write(path, tree, 0o600, false) == nil {
			dirs[dir] = true
		}
	}
	for dir := range dirs {
		pruneCache(dir)
	}
}

// DropParsedTrees forgets the trees parsed since the last call, unwritten:
// the command's input was invalid, and nothing may be written then.
func DropParsedTrees() {
	parseCache.mu.Lock()
	parseCache.pending = nil
	parseCache.mu.Unlock()
}

// SetParseCache keeps the trees of large files in dir ("" turns the cache
// off, as it is by default).
func SetParseCache(dir string) {
	stamp := ""
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			stamp = fmt.Sprintf("%s %d %d", exe, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	parseCache.mu.Lock()
	defer parseCache.mu.Unlock()
	parseCache.dir, parseCache.binary = dir, stamp
	if stamp == "" {
		parseCache.dir = "" // a build that cannot be told apart: no cache
	}
}

// parseCached parses data as ParseBytes does, through the cache when it is
// on and the file is large.
func parseCached(file string, data []byte) ([]*Node, Diagnostics) {
	parseCache.mu.Lock()
	dir, build := parseCache.dir, parseCache.binary
	parseCache.mu.Unlock()
	if dir == "" || len(data) < cacheMinBytes {
		return ParseBytes(file, data)
	}
	h := sha256.New()
	for _, part := range []string{build, file} {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	h.Write(data)
	sum := h.Sum(nil)
	path := filepath.Join(dir, hex.EncodeToString(sum[:16]))
	if b, err := os.ReadFile(path); err == nil {
		if docs, err := decodeTree(b, sum, file); err == nil {
			return docs, nil
		}
	}
	docs, diags := ParseBytes(file, data)
	if len(diags) == 0 {
		tree := encodeTree(docs, sum)
		parseCache.mu.Lock()
		if parseCache.pending == nil {
			parseCache.pending = map[string][]byte{}
		}
		// A long-lived process (gantry worker) loads stack after stack and
		// ends late: it holds no more trees than the cache would keep.
		if len(parseCache.pending) < cacheKeep {
			parseCache.pending[path] = tree
		}
		parseCache.mu.Unlock()
	}
	return docs, diags
}

// pruneCache removes the trees past the newest cacheKeep.
func pruneCache(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) <= cacheKeep {
		return
	}
	type aged struct {
		name string
		mod  int64
	}
	var files []aged
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			files = append(files, aged{e.Name(), fi.ModTime().UnixNano()})
		}
	}
	slices.SortFunc(files, func(a, b aged) int { return int(b.mod - a.mod) })
	for _, f := range files[min(cacheKeep, len(files)):] {
		os.Remove(filepath.Join(dir, f.name))
	}
}

// encodeTree writes documents as: the magic, the content digest, a table
// of the distinct strings, then each node depth-first — kind, type, value,
// line and column, then its entries (key, key position, value) or items.
// Positions keep no file: every node of a tree is of the file parsed.
func encodeTree(docs []*Node, sum []byte) []byte {
	e := treeEncoder{ids: map[string]uint64{}}
	for _, d := range docs {
		e.node(d)
	}
	out := append([]byte(cacheMagic), sum...)
	out = binary.AppendUvarint(out, uint64(len(e.strs)))
	for _, s := range e.strs {
		out = binary.AppendUvarint(out, uint64(len(s)))
		out = append(out, s...)
	}
	out = binary.AppendUvarint(out, uint64(len(docs)))
	return append(out, e.buf...)
}

type treeEncoder struct {
	buf  []byte
	ids  map[string]uint64
	strs []string
}

func (e *treeEncoder) str(s string) {
	id, ok := e.ids[s]
	if !ok {
		id = uint64(len(e.strs))
		e.ids[s] = id
		e.strs = append(e.strs, s)
	}
	e.buf = binary.AppendUvarint(e.buf, id)
}

func (e *treeEncoder) pos(p Pos) {
	e.buf = binary.AppendUvarint(e.buf, uint64(p.Line))
	e.buf = binary.AppendUvarint(e.buf, uint64(p.Col))
}

func (e *treeEncoder) node(n *Node) {
	e.buf = append(e.buf, byte(n.Kind), byte(n.Type))
	e.str(n.Value)
	e.pos(n.Pos)
	switch n.Kind {
	case MapNode:
		e.buf = binary.AppendUvarint(e.buf, uint64(len(n.Entries)))
		for _, en := range n.Entries {
			e.str(en.Key)
			e.pos(en.KeyPos)
			e.node(en.Value)
		}
	case SeqNode:
		e.buf = binary.AppendUvarint(e.buf, uint64(len(n.Items)))
		for _, it := range n.Items {
			e.node(it)
		}
	}
}

// errBadTree is any cached tree that does not read back whole.
var errBadTree = errors.New("cached tree does not read back")

// decodeTree reads a tree encodeTree wrote for the content digest sum,
// with positions in file. Anything else — another digest, a cut or
// damaged file — is an error, never a partial tree: every count is bounded
// by the bytes left, and nesting by maxDepth.
func decodeTree(b, sum []byte, file string) ([]*Node, error) {
	if len(b) < len(cacheMagic)+len(sum) || string(b[:len(cacheMagic)]) != cacheMagic ||
		string(b[len(cacheMagic):len(cacheMagic)+len(sum)]) != string(sum) {
		return nil, errBadTree
	}
	d := treeDecoder{b: b[len(cacheMagic)+len(sum):], file: file}
	n := d.count(1)
	d.strs = make([]string, 0, n)
	for range n {
		l := d.count(1)
		if d.err != nil {
			return nil, d.err
		}
		d.strs = append(d.strs, string(d.b[:l]))
		d.b = d.b[l:]
	}
	docs := make([]*Node, d.count(1))
	for i := range docs {
		docs[i] = d.node(0)
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errBadTree
	}
	return docs, nil
}

type treeDecoder struct {
	b    []byte
	strs []string
	file string
	err  error
}

func (d *treeDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errBadTree
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a count of things each at least size bytes long: one the
// bytes left cannot hold is damage.
func (d *treeDecoder) count(size int) int {
	v := d.uvarint()
	if v > uint64(len(d.b)/size) {
		d.err = errBadTree
		return 0
	}
	return int(v)
}

func (d *treeDecoder) str() string {
	id := d.uvarint()
	if id >= uint64(len(d.strs)) {
		d.err = errBadTree
		return ""
	}
	return d.strs[id]
}

func (d *treeDecoder) pos() Pos {
	line, col := d.uvarint(), d.uvarint()
	if line > 1<<31 || col > 1<<31 {
		d.err = errBadTree
	}
	return Pos{File: d.file, Line: int(line), Col: int(col)}
}

func (d *treeDecoder) node(depth int) *Node {
	if d.err != nil || depth > maxDepth+1 || len(d.b) < 2 {
		d.err = errBadTree
		return &Node{}
	}
	n := &Node{Kind: NodeKind(d.b[0]), Type: ScalarType(d.b[1])}
	d.b = d.b[2:]
	if n.Kind > SeqNode || n.Type > BoolScalar {
		d.err = errBadTree
		return n
	}
	n.Value = d.str()
	n.Pos = d.pos()
	switch n.Kind {
	case MapNode:
		// An entry is at least a key, a position and a node: 6 bytes.
		n.Entries = make([]Entry, d.count(6))
		for i := range n.Entries {
			key, at := d.str(), d.pos()
			n.Entries[i] = Entry{Key: key, KeyPos: at, Value: d.node(depth + 1)}
		}
	case SeqNode:
		n.Items = make([]*Node, d.count(5))
		for i := range n.Items {
			n.Items[i] = d.node(depth + 1)
		}
	}
	return n
}
