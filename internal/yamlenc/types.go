package yamlenc

import (
	"encoding"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml"
)

// typeInfo is what the encoder needs to know about a type, worked out once:
// goccy/go-yaml looks every struct's tags up again for each value, which
// was most of its cost.
type typeInfo struct {
	// marshal says how a value of the type writes itself, if it does.
	marshal marshalKind
	// zeroer: the type has IsZero, which omitempty asks.
	zeroer bool
	// plainKey: a map key of this type is written as its string.
	plainKey bool
	// fields of a struct type, in declaration order.
	fields []field
	// names are the keys of the fields that are not inline: an inline
	// field's key that one of them has is left out, as goccy does.
	names map[string]bool
	// unsupported says why the general encoder must write the type.
	unsupported string
}

type marshalKind uint8

const (
	marshalNone      marshalKind = iota
	marshalInterface             // MarshalYAML() (any, error)
	marshalText                  // encoding.TextMarshaler
	marshalOther                 // anything else goccy handles specially
)

// field is one struct field that is written (or inlined).
type field struct {
	index     int
	name      string // the key, as in the tag
	key       string // the key as written
	omitEmpty bool
	inline    bool
}

var (
	typeInfos       sync.Map // reflect.Type → *typeInfo
	interfaceType   = reflect.TypeFor[yaml.InterfaceMarshaler]()
	interfaceCtx    = reflect.TypeFor[yaml.InterfaceMarshalerContext]()
	bytesType       = reflect.TypeFor[yaml.BytesMarshaler]()
	bytesCtx        = reflect.TypeFor[yaml.BytesMarshalerContext]()
	textType        = reflect.TypeFor[encoding.TextMarshaler]()
	zeroerType      = reflect.TypeFor[yaml.IsZeroer]()
	timeType        = reflect.TypeFor[time.Time]()
	timePointerType = reflect.TypeFor[*time.Time]()
	durationType    = reflect.TypeFor[time.Duration]()
	mapSliceType    = reflect.TypeFor[yaml.MapSlice]()
	mapItemType     = reflect.TypeFor[yaml.MapItem]()
)

// infoOf returns the cached description of t.
func infoOf(t reflect.Type) *typeInfo {
	if ti, ok := typeInfos.Load(t); ok {
		return ti.(*typeInfo)
	}
	ti, _ := typeInfos.LoadOrStore(t, describe(t))
	return ti.(*typeInfo)
}

// describe works out a type's typeInfo, in the order goccy/go-yaml's
// encoder tries marshalers.
func describe(t reflect.Type) *typeInfo {
	ti := &typeInfo{zeroer: t.Implements(zeroerType)}
	switch {
	case t.Implements(bytesCtx), t.Implements(bytesType), t.Implements(interfaceCtx), t == mapItemType:
		ti.marshal = marshalOther
	case t.Implements(interfaceType):
		ti.marshal = marshalInterface
	case t == timeType, t == timePointerType, t == durationType:
		ti.marshal = marshalOther
	case t.Implements(textType):
		ti.marshal = marshalText
	}
	// A map key is written plainly only when nothing but its string can
	// speak for it: goccy sorts keys by fmt.Sprint (which asks Format,
	// Error and String) and encodes them as values. So: no methods.
	ti.plainKey = t.Kind() == reflect.String && t.NumMethod() == 0
	if t.Kind() == reflect.Struct && ti.marshal == marshalNone {
		describeStruct(t, ti)
	}
	return ti
}

// describeStruct lists a struct's fields as goccy's structFieldMap reads
// their tags; options this encoder does not write (flow, anchors, aliases,
// omitzero) leave the type to the general encoder.
func describeStruct(t reflect.Type, ti *typeInfo) {
	ti.names = map[string]bool{}
	seen := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if sf.PkgPath != "" && !sf.Anonymous {
			continue
		}
		tag := sf.Tag.Get("yaml")
		if tag == "" {
			tag = sf.Tag.Get("json")
		}
		if tag == "-" {
			continue
		}
		if sf.PkgPath != "" {
			ti.unsupported = "unexported embedded field " + sf.Name
			return
		}
		opts := strings.Split(tag, ",")
		f := field{index: i, name: strings.ToLower(sf.Name)}
		if opts[0] != "" {
			f.name = opts[0]
		}
		for _, o := range opts[1:] {
			switch {
			case o == "omitempty":
				f.omitEmpty = true
			case o == "inline":
				f.inline = true
			case o == "omitzero", o == "flow", strings.HasPrefix(o, "anchor"), strings.HasPrefix(o, "alias"):
				ti.unsupported = "field option " + o
				return
			}
		}
		if strings.ContainsAny(f.name, "\r\n") {
			ti.unsupported = "field name on several lines"
			return
		}
		if seen[f.name] {
			ti.unsupported = "duplicated field name " + f.name
			return
		}
		seen[f.name] = true
		// One line (checked above), so keyScalar cannot refuse it.
		f.key, _ = keyScalar(f.name)
		if !f.inline {
			ti.names[f.name] = true
		}
		ti.fields = append(ti.fields, f)
	}
}
