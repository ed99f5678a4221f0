package functions

import (
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/internal/pgjson"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// The json and jsonb functions. Values of both types are stored as text
// (jsonb in its normal form, so a sub-value's source text is its jsonb
// text too); the operators j -> k, j ->> k bind to the *_object_field and
// *_array_element functions, as in Postgres.

var (
	jsonT  = sqltypes.JSONType
	jsonbT = sqltypes.JSONBType
)

func isJSONKind(k sqltypes.Kind) bool { return k == sqltypes.JSON || k == sqltypes.JSONB }

// jsonGet declares one of the field and element accessors: by key (text)
// or by index (integer), returning json[b] or text.
func jsonGet(name string, jsonb, byIndex, asText bool, examples ...Example) *Def {
	in := jsonT
	if jsonb {
		in = jsonbT
	}
	res := in
	if asText {
		res = text
	}
	key := text
	if byIndex {
		key = i4
	}
	return register(&Def{
		Name: name, MinArgs: 2, MaxArgs: 2,
		Rule: fixed(res, in, key),
		Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
			if len(args) != 2 || args[0].Type().Kind != in.Kind || byIndex != args[1].Type().IsInteger() || !byIndex && !vec.IsStringKind(args[1].Type().Kind) {
				return nil, errTypes
			}
			return func(in Input) (arrow.Array, error) {
				arrs, err := argsAll(in, 2)
				if err != nil {
					return nil, err
				}
				defer vec.Release(arrs)
				docs := arrs[0].(*array.String)
				bld := array.NewStringBuilder(in.Mem())
				defer bld.Release()
				var keyAt func(i int) string
				var idxAt func(i int) int64
				if byIndex {
					idxAt = reader[int64](arrs[1])
				} else {
					keyAt = reader[string](arrs[1])
				}
				for i := 0; i < in.Rows(); i++ {
					if docs.IsNull(i) || arrs[1].IsNull(i) {
						bld.AppendNull()
						continue
					}
					doc, err := pgjson.Parse(docs.Value(i))
					if err != nil {
						return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type json").WithDetail("%v", err)
					}
					var v pgjson.Value
					var ok bool
					if byIndex {
						v, ok = doc.Index(int(idxAt(i)))
					} else {
						v, ok = doc.Field(keyAt(i))
					}
					out := v.Raw
					if ok && asText {
						out, ok = v.Text(jsonb)
					}
					if !ok {
						bld.AppendNull()
						continue
					}
					if err := growData(in, bld, len(out)); err != nil {
						return nil, err
					}
					bld.Append(out)
				}
				return bld.NewArray(), nil
			}, nil
		},
		Examples: examples,
	})
}

// The accessors behind -> and ->>.
var (
	JSONObjectField = jsonGet("json_object_field", false, false, false,
		Example{`json_object_field('{"a": {"b":1}}', 'a')`, `{"b":1}`}, Example{`'{"a": [1, 2]}'::json -> 'a'`, "[1, 2]"})
	JSONBObjectField = jsonGet("jsonb_object_field", true, false, false,
		Example{`jsonb_object_field('{"a": {"b":1}}', 'a')`, `{"b": 1}`}, Example{`'{"a": 1}'::jsonb -> 'b'`, "NULL"})
	JSONArrayElement = jsonGet("json_array_element", false, true, false,
		Example{`json_array_element('[1, [2, 3]]', 1)`, "[2, 3]"}, Example{`'[1, 2, 3]'::json -> -1`, "3"})
	JSONBArrayElement = jsonGet("jsonb_array_element", true, true, false,
		Example{`jsonb_array_element('[1, [2,3]]', 1)`, "[2, 3]"}, Example{`'[1, 2]'::jsonb -> 5`, "NULL"})
	JSONObjectFieldText = jsonGet("json_object_field_text", false, false, true,
		Example{`json_object_field_text('{"a": "x\ty"}', 'a')`, "x\ty"}, Example{`'{"a": null}'::json ->> 'a'`, "NULL"})
	JSONBObjectFieldText = jsonGet("jsonb_object_field_text", true, false, true,
		Example{`jsonb_object_field_text('{"a": {"b":1}}', 'a')`, `{"b": 1}`}, Example{`'{"a": "x"}'::jsonb ->> 'a'`, "x"})
	JSONArrayElementText = jsonGet("json_array_element_text", false, true, true,
		Example{`json_array_element_text('["a", 2]', 0)`, "a"}, Example{`'["a", 2]'::json ->> 1`, "2"})
	JSONBArrayElementText = jsonGet("jsonb_array_element_text", true, true, true,
		Example{`jsonb_array_element_text('["a", 2]', 0)`, "a"}, Example{`'[true]'::jsonb ->> 0`, "true"})
)

// JSONAccessor is the function behind j -> k (asText false) or j ->> k
// for a json[b] j and a key of type key; nil when there is none.
func JSONAccessor(j, key sqltypes.Type, asText bool) *Def {
	if !isJSONKind(j.Kind) {
		return nil
	}
	byIndex := key.IsInteger()
	if !byIndex && !vec.IsStringKind(key.Kind) {
		return nil
	}
	i := 0
	if j.Kind == sqltypes.JSONB {
		i |= 1
	}
	if byIndex {
		i |= 2
	}
	if asText {
		i |= 4
	}
	return []*Def{JSONObjectField, JSONBObjectField, JSONArrayElement, JSONBArrayElement,
		JSONObjectFieldText, JSONBObjectFieldText, JSONArrayElementText, JSONBArrayElementText}[i]
}

// jsonAnyRule types a call whose arguments may be of any type, an
// untyped literal being text, returning res.
func jsonAnyRule(res sqltypes.Type, pairs bool, name string) Rule {
	return func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		if pairs && len(args)%2 != 0 {
			return nil, res, b.Errorf(sqlerr.InvalidParameterValue, "argument list must have even number of elements").
				WithHint("The arguments of %s() must consist of alternating keys and values.", name)
		}
		for i, a := range args {
			args[i] = b.ResolveUnknown(a)
			if args[i].Type().Kind == sqltypes.Unknown {
				var err error
				if args[i], err = b.Coerce(args[i], i, text); err != nil {
					return nil, res, err
				}
			}
		}
		return args, res, nil
	}
}

// appendJSON appends row i of a (of type t) as to_json does; a NULL is
// null.
func AppendJSON(dst []byte, a arrow.Array, i int, t sqltypes.Type, o *sqltypes.Options) []byte {
	if a.IsNull(i) {
		return append(dst, "null"...)
	}
	switch {
	case t.Kind == sqltypes.JSON || t.Kind == sqltypes.JSONB:
		return append(dst, a.(*array.String).Value(i)...)
	case t.Kind == sqltypes.Bool:
		if a.(*array.Boolean).Value(i) {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case t.Kind == sqltypes.Float4 || t.Kind == sqltypes.Float8:
		var f float64
		if t.Kind == sqltypes.Float4 {
			f = float64(a.(*array.Float32).Value(i))
		} else {
			f = a.(*array.Float64).Value(i)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return pgjson.AppendString(dst, string(sqltypes.EncodeText(nil, a, i, t, o)))
		}
		return sqltypes.EncodeText(dst, a, i, t, o)
	case t.IsNumeric():
		return sqltypes.EncodeText(dst, a, i, t, o)
	}
	s := string(sqltypes.EncodeText(nil, a, i, t, o))
	switch t.Kind {
	case sqltypes.Timestamp, sqltypes.TimestampTZ:
		if sp := strings.IndexByte(s, ' '); sp > 0 && !strings.HasSuffix(s, "infinity") {
			s = s[:sp] + "T" + s[sp+1:]
			if t.Kind == sqltypes.TimestampTZ {
				// +05 is +05:00 in ISO 8601, as Postgres' JSON output writes it.
				if k := strings.LastIndexAny(s, "+-"); k > strings.IndexByte(s, 'T') && len(s)-k == 3 {
					s += ":00"
				}
			}
		}
	}
	return pgjson.AppendString(dst, s)
}

// jsonBuild builds json_build_object, json_build_array and to_json
// kernels: each row's arguments are written by write, and a jsonb result
// is normalized.
func jsonBuild(n int, types []sqltypes.Type, res sqltypes.Type, write func(dst []byte, arrs []arrow.Array, i int, o *sqltypes.Options) ([]byte, error), strict bool) Kernel {
	return func(in Input) (arrow.Array, error) {
		arrs, err := argsAll(in, n)
		if err != nil {
			return nil, err
		}
		defer vec.Release(arrs)
		o := in.Options()
		if o == nil {
			o = sqltypes.DefaultOptions()
		}
		bld := array.NewStringBuilder(in.Mem())
		defer bld.Release()
		var buf []byte
		for i := 0; i < in.Rows(); i++ {
			if strict && arrs[0].IsNull(i) {
				bld.AppendNull()
				continue
			}
			if buf, err = write(buf[:0], arrs, i, o); err != nil {
				return nil, err
			}
			out := string(buf)
			if res.Kind == sqltypes.JSONB {
				v, err := pgjson.Parse(out)
				if err != nil {
					return nil, sqlerr.New(sqlerr.InternalError, "jsonb built invalid JSON: %v", err)
				}
				out = v.JSONB()
			}
			if err := growData(in, bld, len(out)); err != nil {
				return nil, err
			}
			bld.Append(out)
		}
		return bld.NewArray(), nil
	}
}

func buildObject(name string, res sqltypes.Type, examples ...Example) *Def {
	return register(&Def{
		Name: name, MinArgs: 0, MaxArgs: -1,
		Rule: jsonAnyRule(res, true, name),
		Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
			if t.Kind != res.Kind || len(args)%2 != 0 {
				return nil, errTypes
			}
			types := argTypes(args)
			return jsonBuild(len(args), types, res, func(dst []byte, arrs []arrow.Array, i int, o *sqltypes.Options) ([]byte, error) {
				dst = append(dst, '{')
				for k := 0; k < len(arrs); k += 2 {
					if arrs[k].IsNull(i) {
						return nil, sqlerr.New(sqlerr.InvalidParameterValue, "argument %d cannot be null", k+1).WithHint("Object keys should be text.")
					}
					if k > 0 {
						dst = append(dst, ", "...)
					}
					key := string(sqltypes.EncodeText(nil, arrs[k], i, types[k], o))
					if isJSONKind(types[k].Kind) {
						return nil, sqlerr.New(sqlerr.InvalidParameterValue, "key value must be scalar, not array, composite, or json")
					}
					dst = pgjson.AppendString(dst, key)
					dst = append(dst, " : "...)
					dst = AppendJSON(dst, arrs[k+1], i, types[k+1], o)
				}
				return append(dst, '}'), nil
			}, false), nil
		},
		Examples: examples,
	})
}

func buildArray(name string, res sqltypes.Type, examples ...Example) *Def {
	return register(&Def{
		Name: name, MinArgs: 0, MaxArgs: -1,
		Rule: jsonAnyRule(res, false, name),
		Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
			if t.Kind != res.Kind {
				return nil, errTypes
			}
			types := argTypes(args)
			return jsonBuild(len(args), types, res, func(dst []byte, arrs []arrow.Array, i int, o *sqltypes.Options) ([]byte, error) {
				dst = append(dst, '[')
				for k := range arrs {
					if k > 0 {
						dst = append(dst, ", "...)
					}
					dst = AppendJSON(dst, arrs[k], i, types[k], o)
				}
				return append(dst, ']'), nil
			}, false), nil
		},
		Examples: examples,
	})
}

func toJSON(name string, res sqltypes.Type, examples ...Example) *Def {
	return register(&Def{
		Name: name, MinArgs: 1, MaxArgs: 1,
		Rule: jsonAnyRule(res, false, name),
		Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
			if t.Kind != res.Kind || len(args) != 1 {
				return nil, errTypes
			}
			types := argTypes(args)
			return jsonBuild(1, types, res, func(dst []byte, arrs []arrow.Array, i int, o *sqltypes.Options) ([]byte, error) {
				return AppendJSON(dst, arrs[0], i, types[0], o), nil
			}, true), nil
		},
		Examples: examples,
	})
}

// The constructors.
var (
	JSONBuildObject = buildObject("json_build_object", jsonT,
		Example{"json_build_object('a', 1, 'b', 'x\"y')", `{"a" : 1, "b" : "x\"y"}`},
		Example{"json_build_object('t', TIMESTAMP '2020-01-02 03:04:05.5', 'n', NULL, 'ok', true)", `{"t" : "2020-01-02T03:04:05.5", "n" : null, "ok" : true}`},
		Example{"json_build_object()", "{}"})
	JSONBBuildObject = buildObject("jsonb_build_object", jsonbT,
		Example{"jsonb_build_object('b', 1, 'a', 2.50, 'b', 3)", `{"a": 2.50, "b": 3}`})
	JSONBuildArray = buildArray("json_build_array", jsonT,
		Example{`json_build_array(1, 'a', NULL, '{"x":1}'::json)`, `[1, "a", null, {"x":1}]`}, Example{"json_build_array()", "[]"})
	JSONBBuildArray = buildArray("jsonb_build_array", jsonbT,
		Example{`jsonb_build_array(1, '{"x":1}'::json, 'nan'::float8)`, `[1, {"x": 1}, "NaN"]`})
	ToJSON = toJSON("to_json", jsonT,
		Example{`to_json('a"b'::text)`, `"a\"b"`}, Example{"to_json(DATE '2020-01-02')", `"2020-01-02"`}, Example{"to_json(NULL::int)", "NULL"})
	ToJSONB = toJSON("to_jsonb", jsonbT,
		Example{"to_jsonb(1.50)", "1.50"}, Example{"to_jsonb(INTERVAL '1 day')", `"1 day"`})
)
