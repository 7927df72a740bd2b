package secret

import "strings"

// matcher finds the secrets in a text: a trie of their bytes that grows as
// secrets are added. A strings.Replacer had to be built again, its values
// sorted, after every Add: a run that adds a secret per component (a
// password parameter, a secret output) spent 57 % of a deploy of 4,000
// components rebuilding it.
//
// Matching is what that replacer did with the values longest first: from
// the left, at each position the longest secret that starts there is
// masked, and the search goes on after it.
//
// A run of bytes with no branch is one node (its tail), so that the trie
// holds at most two nodes per secret whatever their length: values may be
// 16 MiB, and a node per byte cost 41 bytes of heap for each byte of a
// secret (measured on a 1 MiB one).
type matcher struct {
	// root is the node after each first byte (0: no secret starts with
	// it); nodes[0] is unused, so that 0 means none.
	root  [256]int32
	nodes []trieNode
	// firsts is how many bytes begin a secret (0: no secret yet). When it
	// is one (a run with a secret, or a few that begin alike), prefix is
	// what every secret begins with, and the scan jumps from one to the
	// next with strings.Index, as fast as the replacer's search of one
	// string.
	firsts int
	prefix string
	// few are, while at most fewFirsts bytes begin a secret (a secret and
	// its encodings, which begin with other bytes), what the secrets that
	// begin with each begin with: the scan jumps to the nearest with
	// strings.Index, nearly as fast as with one prefix.
	few []string
}

// fewFirsts is how many bytes that begin a secret the scan looks for with
// strings.IndexByte each.
const fewFirsts = 4

// trieNode is a prefix of one or more secrets: reached by a byte, then
// tail, where a secret may end and others go on by their next byte.
type trieNode struct {
	tail string
	next []trieEdge // sorted by byte
	end  bool       // a secret ends after tail
}

type trieEdge struct {
	b  byte
	to int32
}

func newMatcher() *matcher { return &matcher{nodes: make([]trieNode, 1, 64)} }

// add adds a secret (not empty).
func (t *matcher) add(v string) {
	cur := t.root[v[0]]
	if cur == 0 {
		t.root[v[0]] = t.node(v[1:], true)
		t.firsts++
		t.setPrefix(v)
		return
	}
	for i := 1; ; {
		// Past the byte that led to cur: its tail, as far as v follows it.
		tail := t.nodes[cur].tail
		c := 0
		for c < len(tail) && i+c < len(v) && tail[c] == v[i+c] {
			c++
		}
		if c < len(tail) {
			// v leaves (or ends inside) the tail: cut it there.
			rest := t.node(tail[c+1:], t.nodes[cur].end)
			t.nodes[rest].next = t.nodes[cur].next
			t.nodes[cur].tail, t.nodes[cur].end = tail[:c], false
			t.nodes[cur].next = []trieEdge{{b: tail[c], to: rest}}
		}
		i += c
		if i == len(v) {
			t.nodes[cur].end = true
			break
		}
		next := t.child(cur, v[i])
		if next == 0 {
			t.link(cur, v[i], t.node(v[i+1:], true))
			break
		}
		cur, i = next, i+1
	}
	t.setPrefix(v)
}

// setPrefix keeps what every secret begins with when they all begin with
// the same byte (v, the secret just added, begins with it too, so it is a
// part of v, not a copy: it may be as long as a secret), or what those of
// each first byte begin with when there are few of them.
func (t *matcher) setPrefix(v string) {
	t.prefix, t.few = "", nil
	switch {
	case t.firsts == 1:
		n := 1
		cur := t.root[v[0]]
		for {
			node := &t.nodes[cur]
			n += len(node.tail)
			if node.end || len(node.next) != 1 {
				break
			}
			n++
			cur = node.next[0].to
		}
		t.prefix = v[:n]
	case t.firsts <= fewFirsts:
		for b := range t.root {
			if t.root[b] != 0 {
				t.few = append(t.few, t.common(byte(b)))
			}
		}
	}
}

// common is what every secret that begins with b begins with, at most
// fewPrefix bytes of it (a copy, short whatever the secrets' length).
func (t *matcher) common(b byte) string {
	p := []byte{b}
	cur := t.root[b]
	for len(p) < fewPrefix {
		node := &t.nodes[cur]
		p = append(p, node.tail[:min(len(node.tail), fewPrefix-len(p))]...)
		if node.end || len(node.next) != 1 || len(p) >= fewPrefix {
			break
		}
		p = append(p, node.next[0].b)
		cur = node.next[0].to
	}
	return string(p)
}

// fewPrefix bounds the prefixes of few.
const fewPrefix = 32

func (t *matcher) node(tail string, end bool) int32 {
	t.nodes = append(t.nodes, trieNode{tail: tail, end: end})
	return int32(len(t.nodes) - 1)
}

// child is the node after byte b from node n, 0 when none.
func (t *matcher) child(n int32, b byte) int32 {
	next := t.nodes[n].next
	if len(next) == 1 { // most nodes: one secret goes on from them
		if next[0].b == b {
			return next[0].to
		}
		return 0
	}
	lo, hi := 0, len(next)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if next[m].b < b {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(next) && next[lo].b == b {
		return next[lo].to
	}
	return 0
}

// link adds the edge from n by b to to, keeping the edges sorted.
func (t *matcher) link(n int32, b byte, to int32) {
	next := t.nodes[n].next
	i := 0
	for i < len(next) && next[i].b < b {
		i++
	}
	next = append(next, trieEdge{})
	copy(next[i+1:], next[i:])
	next[i] = trieEdge{b: b, to: to}
	t.nodes[n].next = next
}

// replace returns s with every secret in it replaced by mask.
func (t *matcher) replace(s, mask string) string {
	if t.firsts == 0 {
		return s
	}
	var out []byte // made at the first secret found
	last := 0
	for i := 0; i < len(s); {
		if t.prefix != "" {
			k := strings.Index(s[i:], t.prefix)
			if k < 0 {
				break
			}
			i += k
		} else if t.few != nil {
			k := -1
			for _, p := range t.few {
				if j := strings.Index(s[i:], p); j >= 0 && (k < 0 || j < k) {
					k = j
				}
			}
			if k < 0 {
				break
			}
			i += k
		} else if t.root[s[i]] == 0 { // most bytes begin no secret
			i++
			continue
		}
		end := t.longest(s, i)
		if end < 0 {
			i++
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(s))
		}
		out = append(out, s[last:i]...)
		out = append(out, mask...)
		i, last = end, end
	}
	if out == nil {
		return s
	}
	return string(append(out, s[last:]...))
}

// longest returns where the longest secret starting at s[i] ends, -1 when
// none starts there.
func (t *matcher) longest(s string, i int) int {
	end := -1
	for cur, j := t.root[s[i]], i+1; cur != 0; {
		n := &t.nodes[cur]
		if !strings.HasPrefix(s[j:], n.tail) {
			break
		}
		j += len(n.tail)
		if n.end {
			end = j
		}
		if j == len(s) {
			break
		}
		cur, j = t.child(cur, s[j]), j+1
	}
	return end
}
