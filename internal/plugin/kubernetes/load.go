package kubernetes

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"

	"github.com/gantry-dev/gantry/internal/inputfile"
)

// expandFunc expands the parameter references (${...}, #{...}) of one
// string of a manifest.
type expandFunc func(s string) (string, error)

// Bounds of what one instance loads, far above real releases, so that a
// mistake (a folder of generated files, an alias bomb) is an error and not
// a run out of memory.
const (
	// maxObjects bounds the objects of one instance.
	maxObjects = 10000
	// maxAliasNodes bounds the nodes YAML aliases may add, over all the
	// documents of one instance: a few levels of aliases of aliases
	// ("billion laughs") would otherwise expand a small file into
	// gigabytes. Their text pays too, a node for every aliasTextUnit
	// bytes: a long string repeated in lists of lists is as large.
	maxAliasNodes = 1 << 20
	aliasTextUnit = 64
	// maxDepth bounds the nesting of a document, also through aliases,
	// which the YAML parser's own bound does not see.
	maxDepth = 10000
)

// manifestExts are the extensions of the files a manifests folder
// contributes.
var manifestExts = []string{".yaml", ".yml", ".json"}

// load reads the instance's objects: the CRDs folder's, then the manifests'
// in the order the config lists them, then the kustomize build's. expand
// expands parameter references in every string (nil: none, at plan time).
// All errors are returned together, each positioned; with any error no
// object is returned.
//
// A namespace a manifest leaves out stays empty: which objects are
// namespaced is for the cluster to say, and the runner fills in the release
// namespace for those.
func load(dir string, cfg config, expand expandFunc) ([]*object, error) {
	return newLoader(dir, expand).load(cfg)
}

// newLoader returns a loader of the component folder dir.
func newLoader(dir string, expand expandFunc) *loader {
	return &loader{dir: dir, expand: expand, seen: map[objectKey]string{}, aliasBudget: maxAliasNodes}
}

// load reads the objects of cfg (the function load).
func (l *loader) load(cfg config) ([]*object, error) {
	dir := l.dir
	if crds, explicit := cfg.crdsFolder(dir); crds != "" {
		l.folder("crds", crds, explicit, true)
	}
	for _, p := range cfg.Manifests {
		l.path(p)
	}
	if cfg.Kustomize != "" {
		l.kustomize(cfg.Kustomize)
	}
	if len(l.errs) > 0 {
		return nil, errors.Join(l.errs...)
	}
	return l.objs, nil
}

// loader is one load's progress: what was read and what went wrong.
type loader struct {
	dir    string
	expand expandFunc
	objs   []*object
	errs   []error
	// seen maps each object's identity to where it was defined first.
	seen map[objectKey]string
	// aliasBudget is how many nodes aliases may still add.
	aliasBudget int
	// full is set when maxObjects was reached: the rest is not read.
	full bool
	// outside are the files the kustomize build read outside the folder,
	// by their path from it with symlinks resolved (slash-separated),
	// sorted.
	outside []string
	// strings are the scalars of the document being expanded that
	// Kubernetes takes as strings only (stringValues), and whether each
	// is a Secret's.
	strings map[*yaml.Node]stringValue
	// keepString, while a kustomize build's output is read, reports
	// whether a plain scalar that is exactly one reference was written
	// in quotes: the output does not say (kustomizeFS.quotedOnly).
	keepString func(string) bool
}

// objectKey identifies an object in the cluster. The version is left out:
// two versions of one object are one object.
type objectKey struct{ group, kind, namespace, name string }

// input is one stream of YAML documents: a file, or one resource of a
// kustomize build, and where messages about it point.
type input struct {
	// name is the file's path relative to the component folder, or
	// "kustomize <folder>".
	name string
	// doc numbers a kustomize build's resources from 1; 0 for files,
	// whose positions are lines.
	doc int
	// crd marks the CRDs folder's files.
	crd bool
}

// at says where a line and column of the input are.
func (in input) at(line, col int) string {
	if in.doc > 0 {
		return fmt.Sprintf("%s (document %d, line %d column %d)", in.name, in.doc, line, col)
	}
	return fmt.Sprintf("%s:%d:%d", in.name, line, col)
}

// source says where a document starting at line and column is.
func (in input) source(line, col int) string {
	if in.doc > 0 {
		return fmt.Sprintf("%s (document %d)", in.name, in.doc)
	}
	return in.at(line, col)
}

// errorf notes an error and goes on: a load reports all it finds.
func (l *loader) errorf(format string, args ...any) {
	l.errs = append(l.errs, fmt.Errorf(format, args...))
}

// path loads one manifests entry: a file, or a folder's manifest files.
func (l *loader) path(rel string) {
	fi, err := os.Stat(filepath.Join(l.dir, rel))
	if err != nil {
		l.errorf("manifests: %s: %s", rel, inputfile.Problem(err))
		return
	}
	if fi.IsDir() {
		l.folder("manifests", rel, true, false)
		return
	}
	l.file(rel, false)
}

// folder loads the manifest files of a folder, sorted by name, not those of
// its sub-folders. field is the config field that named it; a folder named
// explicitly must hold manifests.
func (l *loader) folder(field, rel string, explicit, crd bool) {
	entries, err := os.ReadDir(filepath.Join(l.dir, rel))
	if err != nil {
		l.errorf("%s: %s: %s", field, rel, inputfile.Problem(err))
		return
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() || !isManifestFile(e.Name()) {
			continue
		}
		n++
		l.file(filepath.ToSlash(filepath.Join(rel, e.Name())), crd)
	}
	if n == 0 && explicit {
		l.errorf("%s: %s: the folder has no *.yaml, *.yml or *.json files", field, rel)
	}
}

// isManifestFile reports whether a folder's file is one of its manifests.
func isManifestFile(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	for _, e := range manifestExts {
		if ext == e {
			return true
		}
	}
	return false
}

// file loads one manifest file, bounded in size and never a FIFO or device.
func (l *loader) file(rel string, crd bool) {
	if l.full {
		return
	}
	data, err := inputfile.Read(filepath.Join(l.dir, rel), inputfile.MaxManifest)
	if err != nil {
		l.errorf("%s: %s", rel, inputfile.Problem(err))
		return
	}
	l.documents(input{name: rel, crd: crd}, data)
}

// documents loads the YAML documents of one input. A syntax error ends the
// input, since the parser cannot find the next document after it.
func (l *loader) documents(in input, data []byte) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for !l.full {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			l.errs = append(l.errs, yamlError(in, err))
			return
		}
		l.document(in, &doc)
	}
}

// yamlLine finds the line yaml.v3 puts in its messages.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// yamlError positions a YAML syntax error: "app.yaml:3: did not find
// expected key" rather than "yaml: line 3: ...".
func yamlError(in input, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		rest := msg[len(m[0]):]
		if in.doc > 0 {
			return fmt.Errorf("%s (document %d, line %s): %s", in.name, in.doc, m[1], rest)
		}
		return fmt.Errorf("%s:%s: %s", in.name, m[1], rest)
	}
	where := in.name
	if in.doc > 0 {
		where = in.source(0, 0)
	}
	return fmt.Errorf("%s: %s", where, strings.TrimPrefix(msg, "yaml: "))
}

// document loads the object, or the items of the List, of one document.
// Empty documents (nothing, or only comments) are skipped, as kubectl
// skips them.
func (l *loader) document(in input, doc *yaml.Node) {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return
	}
	src := in.source(root.Line, root.Column)
	var planned []string
	if l.expand != nil {
		planned = plannedRefs(in, root)
		before := len(l.errs)
		l.strings = stringValues(root)
		l.expandNode(in, root)
		l.strings = nil
		if len(l.errs) > before {
			return
		}
	}
	c := converter{in: in, budget: &l.aliasBudget, active: map[*yaml.Node]bool{}}
	v, err := c.value(root, 0)
	if err != nil {
		l.errs = append(l.errs, err)
		return
	}
	objs, srcs, err := objectsOf(in, root, src, v)
	if err != nil {
		l.errs = append(l.errs, err)
	}
	nodes := []*yaml.Node{root}
	if len(objs) != 1 || len(srcs) == 1 && srcs[0] != src {
		nodes = listItems(root)
	}
	for i, m := range objs {
		var at map[string]string
		if len(nodes) == len(objs) {
			at = annotationPositions(in, nodes[i])
		}
		o := l.add(in, srcs[i], m, at)
		if o != nil && len(planned) == len(objs) {
			o.planned = planned[i]
		}
	}
}

// objectsOf returns the object of a document, or the items of a List
// (kubectl get -o yaml writes them) each positioned where it starts when
// it can be found, with their sources.
func objectsOf(in input, root *yaml.Node, src string, v any) ([]map[string]any, []string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("%s: a manifest document must be a mapping (one object); got %s", src, Describe(v))
	}
	kind, _ := m["kind"].(string)
	if !isListKind(kind, m) {
		return []map[string]any{m}, []string{src}, nil
	}
	items, ok := m["items"].([]any)
	if !ok && m["items"] != nil {
		return nil, nil, fmt.Errorf("%s: List: items must be a list of objects; got %s", src, Describe(m["items"]))
	}
	itemNodes := listItems(root)
	var objs []map[string]any
	var srcs []string
	var errs []error
	for i, it := range items {
		isrc := fmt.Sprintf("%s (item %d)", src, i+1)
		if len(itemNodes) == len(items) && in.doc == 0 {
			isrc = in.at(itemNodes[i].Line, itemNodes[i].Column)
		}
		im, ok := it.(map[string]any)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: a List item must be a mapping (one object); got %s", isrc, Describe(it)))
			continue
		}
		if kind != "List" {
			// A typed list's items may leave out what the list says
			// (kubectl get -o yaml of a ConfigMapList).
			if _, has := im["apiVersion"]; !has && m["apiVersion"] != nil {
				im["apiVersion"] = m["apiVersion"]
			}
			if _, has := im["kind"]; !has {
				im["kind"] = strings.TrimSuffix(kind, "List")
			}
		}
		objs = append(objs, im)
		srcs = append(srcs, isrc)
	}
	return objs, srcs, errors.Join(errs...)
}

// isListKind reports whether a document of kind is a list of objects, as
// kubectl reads them: List, or a typed list (ConfigMapList) with items and
// no name of its own.
func isListKind(kind string, m map[string]any) bool {
	if kind == "List" {
		return true
	}
	if !strings.HasSuffix(kind, "List") || len(kind) == len("List") {
		return false
	}
	if _, ok := m["items"].([]any); !ok {
		return false
	}
	md, _ := m["metadata"].(map[string]any)
	return md["name"] == nil
}

// plannedRefs returns the refs of a document's objects as written, before
// expansion, or nil when they cannot be read (the expanded document's
// errors say why).
func plannedRefs(in input, root *yaml.Node) []string {
	budget := maxAliasNodes
	c := converter{in: in, budget: &budget, active: map[*yaml.Node]bool{}}
	v, err := c.value(root, 0)
	if err != nil {
		return nil
	}
	objs, _, err := objectsOf(in, root, "", v)
	if err != nil {
		return nil
	}
	refs := make([]string, len(objs))
	for i, m := range objs {
		refs[i] = (&object{u: &unstructured.Unstructured{Object: m}}).ref()
	}
	return refs
}

// listItems returns the nodes of a List's items as written, or nil when
// they are not written out plainly (merged in, say).
func listItems(root *yaml.Node) []*yaml.Node {
	if root.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "items" {
			items := root.Content[i+1]
			if items.Kind == yaml.SequenceNode {
				return items.Content
			}
		}
	}
	return nil
}

// annotationPositions are where each annotation's value is written in an
// object's node, as the manifests have it (an annotation merged in or
// aliased has none: its errors name the object's start).
func annotationPositions(in input, n *yaml.Node) map[string]string {
	child := func(n *yaml.Node, key string) *yaml.Node {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i+1]
			}
		}
		return nil
	}
	ann := child(child(n, "metadata"), "annotations")
	if ann == nil || ann.Kind != yaml.MappingNode {
		return nil
	}
	out := make(map[string]string, len(ann.Content)/2)
	for i := 0; i+1 < len(ann.Content); i += 2 {
		vn := ann.Content[i+1]
		out[ann.Content[i].Value] = in.at(vn.Line, vn.Column)
	}
	return out
}

// add checks one object and appends it; nil when it is not added. at are
// where its annotations' values are written (annotationPositions).
func (l *loader) add(in input, src string, m map[string]any, at map[string]string) *object {
	if l.full {
		return nil
	}
	if !l.checkShape(src, m) {
		return nil
	}
	u := &unstructured.Unstructured{Object: m}
	o := &object{u: u, source: src, crd: in.crd || isCRD(u), annotationAt: at}
	if in.crd {
		if !isCRD(u) {
			l.errorf("%s: %s: the CRDs folder holds only CustomResourceDefinitions (apiextensions.k8s.io); put other objects in the manifests", src, o.ref())
			return nil
		}
		if o.isHook() {
			l.errorf("%s: %s: a CRD of the CRDs folder is deployed before everything else and cannot be a hook; remove %s or move it to the manifests", src, o.ref(), annHook)
			return nil
		}
	}
	if len(l.objs) == maxObjects {
		l.errorf("%s: more than %d objects; gantry refuses releases this large", src, maxObjects)
		l.full = true
		return nil
	}
	gvk := u.GroupVersionKind()
	key := objectKey{gvk.Group, gvk.Kind, u.GetNamespace(), u.GetName()}
	if first, dup := l.seen[key]; dup {
		l.errorf("%s: %s is defined twice: also at %s", src, o.ref(), first)
		return nil
	}
	l.seen[key] = src
	l.errs = append(l.errs, o.validate()...)
	l.objs = append(l.objs, o)
	return o
}

// checkShape checks what every object needs and what the accessors of
// unstructured would silently drop: apiVersion, kind and metadata.name as
// strings, and annotations and labels whose values are strings (an
// unquoted "helm.sh/hook-weight: 5" is a number, which the API refuses).
func (l *loader) checkShape(src string, m map[string]any) bool {
	ok := true
	var ref string
	if k, _ := m["kind"].(string); k != "" {
		ref = k + " "
	}
	need := func(field string, v any) {
		if s, isStr := v.(string); !isStr || s == "" {
			if v == nil {
				l.errorf("%s: %smissing %s; every object needs apiVersion, kind and metadata.name", src, ref, field)
			} else {
				l.errorf("%s: %s%s must be a non-empty string; got %s", src, ref, field, Describe(v))
			}
			ok = false
		}
	}
	need("apiVersion", m["apiVersion"])
	need("kind", m["kind"])
	if s, isStr := m["apiVersion"].(string); isStr && s != "" {
		if _, err := schema.ParseGroupVersion(s); err != nil {
			l.errorf("%s: %sapiVersion %q is not group/version or version", src, ref, s)
			ok = false
		}
	}
	meta, isMap := m["metadata"].(map[string]any)
	if m["metadata"] != nil && !isMap {
		l.errorf("%s: %smetadata must be a mapping; got %s", src, ref, Describe(m["metadata"]))
		return false
	}
	need("metadata.name", meta["name"])
	if ns, present := meta["namespace"]; present && ns != nil {
		if _, isStr := ns.(string); !isStr {
			l.errorf("%s: %smetadata.namespace must be a string; got %s", src, ref, Describe(ns))
			ok = false
		}
	}
	for _, f := range []string{"annotations", "labels"} {
		x, present := meta[f]
		if !present || x == nil {
			continue
		}
		mm, isMap := x.(map[string]any)
		if !isMap {
			l.errorf("%s: %smetadata.%s must be a mapping of strings; got %s", src, ref, f, Describe(x))
			ok = false
			continue
		}
		for _, k := range sortedKeys(mm) {
			if _, isStr := mm[k].(string); !isStr {
				l.errorf("%s: %smetadata.%s.%s: values must be strings (quote it); got %s", src, ref, f, k, Describe(mm[k]))
				ok = false
			}
		}
	}
	return ok
}

// sortedKeys returns a map's keys in order, for messages in a stable order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// isCRD reports whether u is a CustomResourceDefinition.
func isCRD(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return gvk.Kind == "CustomResourceDefinition" && gvk.Group == "apiextensions.k8s.io"
}

// expandNode expands the references in every scalar of a document —
// values and mapping keys — on the parsed tree, never on the text: a value
// holding "a: b" or "]" stays one string and cannot add YAML. Aliases are
// not followed: the anchored node is expanded where it is written.
func (l *loader) expandNode(in input, n *yaml.Node) {
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			l.expandNode(in, c)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.ScalarNode {
				l.expandScalar(in, k, true)
			} else {
				l.expandNode(in, k)
			}
			l.expandNode(in, n.Content[i+1])
		}
	case yaml.ScalarNode:
		l.expandScalar(in, n, false)
	}
}

// scalarStyles are the styles of a scalar written other than plain, or
// with an explicit tag: their type is what was written.
const scalarStyles = yaml.TaggedStyle | yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle

// expandScalar expands one scalar. A plain value that is exactly one
// reference ("replicas: ${replicas}") takes the type YAML gives the
// expanded text written plain (3 is a number, true a boolean), as if the
// value had been written in its place; any other scalar stays a string, so
// "image: app:${tag}" never becomes a number. Keys stay strings.
func (l *loader) expandScalar(in input, n *yaml.Node, isKey bool) {
	if !HasRef(n.Value) {
		return
	}
	out, err := l.expand(n.Value)
	if err != nil {
		msg := err.Error()
		if l.strings[n] == secretValue {
			msg = unquotedMessage(err) // not the Secret's text under a caret
		}
		l.errorf("%s: %s", in.at(n.Line, n.Column), msg)
		return
	}
	retype := !isKey && n.Style&scalarStyles == 0 && singleRef(n.Value) && l.strings[n] == 0 && (l.keepString == nil || !l.keepString(n.Value))
	n.Value = out
	if retype {
		n.Tag = plainTag(out)
	} else if n.Style&yaml.TaggedStyle == 0 {
		n.Tag = "!!str"
	}
}

// stringValues are the scalars of a document (an object, or the items of
// a List) that Kubernetes takes as strings only: the values of a
// ConfigMap's or Secret's data, stringData and binaryData, of any object's
// labels and annotations, and of a container's env entries (value:
// anywhere under an env: list). A reference alone there stays a string once
// expanded, however it was written: a kustomize build writes "${port}"
// without its quotes. A Secret's data, stringData and binaryData are
// secretValue: an error about one never quotes it.
func stringValues(root *yaml.Node) map[*yaml.Node]stringValue {
	out := map[*yaml.Node]stringValue{}
	values := func(m *yaml.Node, kind stringValue) {
		if m.Kind == yaml.MappingNode {
			for j := 1; j < len(m.Content); j += 2 {
				out[m.Content[j]] = kind
			}
		}
	}
	var env func(n *yaml.Node, depth int)
	env = func(n *yaml.Node, depth int) {
		if depth > maxDepth {
			return
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if v := n.Content[i+1]; n.Content[i].Value == "env" && v.Kind == yaml.SequenceNode {
					for _, e := range v.Content {
						for j := 0; e.Kind == yaml.MappingNode && j+1 < len(e.Content); j += 2 {
							if e.Content[j].Value == "value" {
								out[e.Content[j+1]] = plainString
							}
						}
					}
				} else {
					env(v, depth+1)
				}
			}
		case yaml.SequenceNode:
			for _, c := range n.Content {
				env(c, depth+1)
			}
		}
	}
	var object func(n *yaml.Node)
	object = func(n *yaml.Node) {
		if n.Kind != yaml.MappingNode {
			return
		}
		kind := ""
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "kind" {
				kind = n.Content[i+1].Value
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			switch {
			case strings.HasSuffix(kind, "List") && k == "items" && v.Kind == yaml.SequenceNode:
				for _, item := range v.Content {
					object(item)
				}
			case kind == "ConfigMap" && (k == "data" || k == "stringData" || k == "binaryData"):
				values(v, plainString)
			case kind == "Secret" && (k == "data" || k == "stringData" || k == "binaryData"):
				values(v, secretValue)
			case k == "metadata" && v.Kind == yaml.MappingNode:
				for j := 0; j+1 < len(v.Content); j += 2 {
					if m := v.Content[j].Value; m == "labels" || m == "annotations" {
						values(v.Content[j+1], plainString)
					}
				}
			case k == "spec":
				env(v, 0)
			}
		}
	}
	object(root)
	return out
}

// stringValue is what stringValues makes of a scalar: 0 for one that
// takes YAML's type.
type stringValue uint8

const (
	plainString stringValue = iota + 1 // a string, whatever it looks like
	secretValue                        // a string of a Secret's: never quoted
)

// singleRef reports whether s is exactly one reference: "${name}" or
// "#{expr}".
func singleRef(s string) bool {
	if len(s) < 3 || !strings.HasSuffix(s, "}") {
		return false
	}
	if !strings.HasPrefix(s, "${") && !strings.HasPrefix(s, "#{") {
		return false
	}
	inner := s[2 : len(s)-1]
	if strings.Contains(inner, "${") || strings.Contains(inner, "#{") {
		return false
	}
	return s[0] == '#' || !strings.Contains(inner, "}")
}

// plainTag is the type YAML gives s written as a plain scalar, among those
// JSON can hold: null, bool, int, finite float; else string. Timestamps and
// "<<" (a merge key) stay strings.
func plainTag(s string) string {
	n := yaml.Node{Kind: yaml.ScalarNode, Value: s}
	switch t := n.ShortTag(); t {
	case "!!null", "!!bool", "!!int":
		return t
	case "!!float":
		var f float64
		if n.Decode(&f) == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return t
		}
	}
	return "!!str"
}

// converter turns a YAML node into the JSON-like values unstructured
// holds: map[string]any, []any, string, int64, float64, bool and nil. It
// expands aliases within a budget, applies merge keys ("<<"), refuses
// duplicate keys, and positions its errors.
type converter struct {
	in     input
	budget *int
	// active are the anchors being expanded, to refuse one that
	// contains an alias of itself.
	active map[*yaml.Node]bool
	// aliased counts the aliases being expanded: nodes met meanwhile
	// are paid from the budget.
	aliased int
}

// errorf makes an error positioned at n.
func (c *converter) errorf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s: %s", c.in.at(n.Line, n.Column), fmt.Sprintf(format, args...))
}

// value converts a node; depth is its nesting, counted through aliases.
func (c *converter) value(n *yaml.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, c.errorf(n, "nested more than %d levels deep", maxDepth)
	}
	if c.aliased > 0 {
		*c.budget -= 1 + len(n.Value)/aliasTextUnit
		if *c.budget < 0 {
			return nil, c.errorf(n, "aliases expand to more than %d nodes, or %d MiB of text (an alias bomb?)", maxAliasNodes, maxAliasNodes*aliasTextUnit>>20)
		}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0], depth)
	case yaml.AliasNode:
		t := n.Alias
		if t == nil {
			return nil, c.errorf(n, "alias *%s names no anchor", n.Value)
		}
		if c.active[t] {
			return nil, c.errorf(n, "alias *%s is inside its own anchor", n.Value)
		}
		c.active[t] = true
		c.aliased++
		v, err := c.value(t, depth+1)
		c.aliased--
		delete(c.active, t)
		return v, err
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := c.value(e, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		return c.mapping(n, depth)
	case yaml.ScalarNode:
		return c.scalar(n)
	}
	return nil, c.errorf(n, "unexpected YAML node")
}

// mapping converts a mapping. Keys written in it win over merged ones
// ("<<: *base"), and of several merged mappings the first wins, as YAML's
// merge key says.
func (c *converter) mapping(n *yaml.Node, depth int) (map[string]any, error) {
	out := make(map[string]any, len(n.Content)/2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if kn.Kind == yaml.ScalarNode && kn.ShortTag() == "!!merge" {
			merges = append(merges, vn)
			continue
		}
		k, err := c.key(kn)
		if err != nil {
			return nil, err
		}
		if _, dup := out[k]; dup {
			return nil, c.errorf(kn, "mapping key %q is defined twice", k)
		}
		v, err := c.value(vn, depth+1)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	for _, mn := range merges {
		sources := []*yaml.Node{mn}
		if mn.Kind == yaml.SequenceNode {
			sources = mn.Content
		}
		for _, s := range sources {
			v, err := c.value(s, depth+1)
			if err != nil {
				return nil, err
			}
			mm, ok := v.(map[string]any)
			if !ok {
				return nil, c.errorf(s, "<< merges mappings; got %s", Describe(v))
			}
			for k, x := range mm {
				if _, set := out[k]; !set {
					out[k] = x
				}
			}
		}
	}
	return out, nil
}

// key converts a mapping key: a scalar, taken as the string it is written
// as ("1: x" has the key "1", as in JSON).
func (c *converter) key(n *yaml.Node) (string, error) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.ScalarNode {
		return "", c.errorf(n, "a mapping key must be a string, not a mapping or a list")
	}
	return n.Value, nil
}

// scalar converts a scalar to what JSON can hold.
func (c *converter) scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!str", "!!timestamp", "!!merge":
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool", "!!int", "!!float":
	default:
		// Custom tags (!Ref x) have no meaning to Kubernetes: the text.
		return n.Value, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, c.errorf(n, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	switch x := v.(type) {
	case bool:
		return x, nil
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), nil
		}
		return float64(x), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, c.errorf(n, "%s is not a number JSON can hold", n.Value)
		}
		return x, nil
	case nil:
		return nil, nil
	}
	return n.Value, nil
}

// kustomize loads the build of a kustomize overlay. kustomize runs with its
// defaults: builtin transformers and generators only — no exec or container
// functions, no Helm chart inflation — and remote bases and files are
// refused before the build (localKustomization), so that a build reads
// nothing but the component's files.
func (l *loader) kustomize(rel string) {
	root := filepath.Join(l.dir, rel)
	if err := localKustomization(root, rel, map[string]bool{}); err != nil {
		l.errorf("kustomize %s: %v", rel, err)
		return
	}
	opts := krusty.MakeDefaultOptions()
	opts.PluginConfig = types.DisabledPluginConfig()
	opts.PluginConfig.HelmConfig.Enabled = false
	opts.PluginConfig.FnpLoadingOptions = types.FnPluginLoadingOptions{}
	fsys := newKustomizeFS(l.dir, l.expand)
	m, err := krusty.MakeKustomizer(opts).Run(fsys, root)
	l.outside = slices.Sorted(maps.Keys(fsys.outside))
	if len(fsys.errs) > 0 {
		l.errs = append(l.errs, fsys.errs...)
		return
	}
	if err != nil {
		l.errorf("kustomize %s: %s", rel, oneLine(err.Error()))
		return
	}
	l.keepString = fsys.quotedOnly
	defer func() { l.keepString = nil }()
	for i, r := range m.Resources() {
		data, err := r.AsYAML()
		in := input{name: "kustomize " + rel, doc: i + 1}
		if err != nil {
			l.errorf("%s: %v", in.source(0, 0), err)
			continue
		}
		l.documents(in, data)
	}
}

// kustomizeConfigBlock is the config kustomize quotes in its errors about
// a builtin (`\n name: x\n ...`), over several lines.
var kustomizeConfigBlock = regexp.MustCompile("(?s) with config: `.*?`: ")

// kustomizeLiterals are the literals kustomize quotes in its errors about
// a generator's literal sources (all of the generator's, a
// secretGenerator's too): "literal sources [a=1 b=2]", and the one it
// refuses. They are left out of what is said.
var kustomizeLiterals = regexp.MustCompile(`(?s)literal sources \[.*?\]: |invalid literal source .*?, expected key=value`)

// oneLine makes one line of a kustomize error: its chain is one problem,
// which a message of several lines would show as several.
func oneLine(msg string) string {
	msg = kustomizeConfigBlock.ReplaceAllString(msg, ": ")
	msg = kustomizeLiterals.ReplaceAllStringFunc(msg, func(m string) string {
		if strings.HasPrefix(m, "literal sources") {
			return ""
		}
		return "a literal source is not key=value"
	})
	return strings.Join(strings.Fields(msg), " ")
}

// kustomizationFiles are the names kustomize looks for, in its order.
var kustomizationFiles = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// Fields of a kustomization that name other kustomizations or files, which
// kustomize would fetch when they are remote.
var (
	kustomizeDirFields  = []string{"resources", "components", "bases"}
	kustomizeListFields = []string{"crds", "patchesStrategicMerge", "generators", "transformers", "validators", "configurations"}
	kustomizePathFields = []string{"patches", "patchesJson6902", "replacements"}
	kustomizeGenFields  = []string{"configMapGenerator", "secretGenerator"}
)

// remoteRef matches what kustomize takes for a remote git repository or
// URL: a scheme, user@host: (scp style), or github.com/.
var remoteRef = regexp.MustCompile(`(?i)^(git::)?([a-z][a-z0-9+.-]*://|[a-z][a-z0-9-]*@|github\.com[/:])`)

// localKustomization refuses a kustomization (and the local ones it uses)
// that names remote resources or files: kustomize would clone them with git
// or fetch them over HTTP, and a deploy would depend on the network and on
// what a branch holds that day. seen guards against cycles.
func localKustomization(dir, rel string, seen map[string]bool) error {
	if seen[dir] || len(seen) > 1000 {
		return nil
	}
	seen[dir] = true
	var data []byte
	var name string
	for _, f := range kustomizationFiles {
		b, err := inputfile.Read(filepath.Join(dir, f), inputfile.MaxManifest)
		if err == nil {
			data, name = b, f
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: %s", filepath.ToSlash(filepath.Join(rel, f)), inputfile.Problem(err))
		}
	}
	if name == "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s is not a folder", rel)
		}
		return fmt.Errorf("%s has no kustomization.yaml, kustomization.yml or Kustomization", rel)
	}
	var k map[string]any
	if err := yaml.Unmarshal(data, &k); err != nil {
		// kustomize reports it, with its own words.
		return nil
	}
	where := filepath.ToSlash(filepath.Join(rel, name))
	for _, f := range []string{"helmCharts", "helmGlobals", "helmChartInflationGenerator"} {
		if _, ok := k[f]; ok {
			return fmt.Errorf("%s: %s: gantry does not inflate Helm charts in a kustomization; deploy the chart with the helm plugin (docs/helm.md) as a component of its own", where, f)
		}
	}
	remote := func(field, s string) error {
		return fmt.Errorf("%s: %s: %q is remote; gantry builds kustomizations from local files only (vendor it into the component)", where, field, s)
	}
	for _, f := range kustomizeDirFields {
		for _, s := range stringsOf(k[f]) {
			if remoteRef.MatchString(s) {
				return remote(f, s)
			}
			sub := filepath.Join(dir, filepath.FromSlash(s))
			if fi, err := os.Stat(sub); err == nil && fi.IsDir() {
				if err := localKustomization(sub, filepath.ToSlash(filepath.Join(rel, s)), seen); err != nil {
					return err
				}
			}
		}
	}
	for _, f := range kustomizeListFields {
		for _, s := range stringsOf(k[f]) {
			if !strings.Contains(s, "\n") && remoteRef.MatchString(s) {
				return remote(f, s)
			}
		}
	}
	for _, f := range kustomizePathFields {
		list, _ := k[f].([]any)
		for _, e := range list {
			m, _ := e.(map[string]any)
			if s, _ := m["path"].(string); remoteRef.MatchString(s) {
				return remote(f, s)
			}
		}
	}
	if m, _ := k["openapi"].(map[string]any); m != nil {
		if s, _ := m["path"].(string); remoteRef.MatchString(s) {
			return remote("openapi", s)
		}
	}
	for _, f := range kustomizeGenFields {
		list, _ := k[f].([]any)
		for _, e := range list {
			m, _ := e.(map[string]any)
			files := append(stringsOf(m["files"]), stringsOf(m["envs"])...)
			if s, ok := m["env"].(string); ok {
				files = append(files, s)
			}
			for _, s := range files {
				if _, p, ok := strings.Cut(s, "="); ok {
					s = p
				}
				if remoteRef.MatchString(s) {
					return remote(f, s)
				}
			}
		}
	}
	return nil
}

// stringsOf returns the strings of a YAML list, ignoring anything else
// (kustomize reports what is malformed).
func stringsOf(x any) []string {
	list, _ := x.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}
