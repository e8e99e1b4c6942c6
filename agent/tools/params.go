package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// A tool's parameters are declared once, as a struct P: each field is a
// parameter, in the order the model sees them, named by its json tag
// (omitempty marks it optional) and described by its jsonschema tag. From
// P come the JSON schema sent to the engine (by jsonschema-go, which keeps
// the field order and writes byte for byte what the hand-written schemas
// were; agent/testdata/toolspecs.txtar pins them), the usage text of the
// errors, and the decoding of a call's arguments.
//
// A field is a string, a bool (false when left out) or an OptionalInt.
// Decoding is not json.Unmarshal into P: models slip in ways a strict
// decoder refuses (a number as a string, "true" in quotes, the arguments
// encoded twice) and each error must name the parameter at fault and
// the expected shape; so each field is read by args (args.go).

// OptionalInt is an integer parameter the model may leave out: Set says
// whether it gave one.
type OptionalInt struct {
	N   int
	Set bool
}

// Params is the declaration of the parameters of a tool, from the
// struct P.
type Params[P any] struct {
	schema json.RawMessage
	usage  string
	fields []param
}

// param is one parameter: its field of P and how it is read.
type param struct {
	index    int
	name     string
	kind     string // "string", "integer" or "boolean"
	required bool
}

var optionalIntType = reflect.TypeFor[OptionalInt]()

// Declare reads the declaration P. It panics when P is not a struct of
// the supported fields: declarations are package variables, so a mistake
// fails every test of the package.
func Declare[P any]() *Params[P] {
	t := reflect.TypeFor[P]()
	s, err := jsonschema.For[P](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		optionalIntType: {Type: "integer"},
	}})
	if err != nil {
		panic(fmt.Sprintf("tools: parameters %s: %v", t, err))
	}
	schema, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tools: parameters %s: %v", t, err))
	}
	d := &Params[P]{schema: schema}
	var usage []string
	for i := range t.NumField() {
		p := fieldParam(t, i)
		d.fields = append(d.fields, p)
		opt := "?"
		if p.required {
			opt = ""
		}
		usage = append(usage, fmt.Sprintf("%q%s: %s", p.name, opt, p.kind))
	}
	d.usage = "{" + strings.Join(usage, ", ") + "}"
	return d
}

// fieldParam is the parameter of P's field i.
func fieldParam(t reflect.Type, i int) param {
	f := t.Field(i)
	name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" || name == "-" || !f.IsExported() {
		panic(fmt.Sprintf("tools: parameters %s: field %s needs a json name", t, f.Name))
	}
	p := param{index: i, name: name, required: !slices.Contains(strings.Split(opts, ","), "omitempty")}
	switch {
	case f.Type.Kind() == reflect.String:
		p.kind = "string"
	case f.Type.Kind() == reflect.Bool && !p.required:
		p.kind = "boolean"
	case f.Type == optionalIntType && !p.required:
		p.kind = "integer"
	default:
		panic(fmt.Sprintf("tools: parameters %s: field %s: a parameter is a string, or an optional bool or OptionalInt", t, f.Name))
	}
	return p
}

// Spec is the definition of the tool name described by description.
func (d *Params[P]) Spec(name, description string) ctxwin.ToolSpec {
	return ctxwin.ToolSpec{Name: name, Description: description, Parameters: slices.Clone(d.schema)}
}

// Usage is the parameters' shape as the errors show it, e.g.
// `{"path": string, "start_line"?: integer}`.
func (d *Params[P]) Usage() string { return d.usage }

// Decode reads a call's JSON arguments into a P. The error, the first
// problem found in field order, names the parameter and the usage.
func (d *Params[P]) Decode(raw json.RawMessage) (P, error) {
	var p P
	a := parseArgs(raw, d.usage)
	v := reflect.ValueOf(&p).Elem()
	for _, f := range d.fields {
		field := v.Field(f.index)
		switch f.kind {
		case "string":
			field.SetString(a.str(f.name, f.required))
		case "boolean":
			field.SetBool(a.boolean(f.name))
		case "integer":
			n, set := a.integer(f.name)
			field.Set(reflect.ValueOf(OptionalInt{N: n, Set: set}))
		}
	}
	return p, a.err
}
