// gohash: the Go side of kruise's port of ComputeHash (rollouts/kruise/rollouts/workloads/deployment/gohash).
//
//	gohash schema        print the JSON schema of every type reachable from v1.PodTemplateSpec,
//	                     as spew's formatter walks them (the port vendors it per k8s.io/api version)
//	gohash hash FILE...  print, one per line, ComputeHash of each pod template (JSON, as the API
//	                     server returns it), decoded by encoding/json: the oracle of the tests
//	gohash text FILE     print spew's %#v of the template (what is hashed), to compare on failure
//
// Built with go.mod (k8s.io/api v0.28.9, the Kruise Rollouts pin) or -modfile=go.v0.37.2.mod
// (the k8s.io/api of kube-controller-manager 1.37.2).
package main

import (
	"encoding"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/davecgh/go-spew/spew"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"
)

// computeHash is util.ComputeHash of openkruise/rollouts (pkg/util/workloads_utils.go) and of
// kube-controller-manager (pkg/controller/controller_utils.go): FNV-32a over spew's %#v.
func computeHash(template *v1.PodTemplateSpec, collisionCount *int32) string {
	hasher := fnv.New32a()
	hasher.Reset()
	printer := spew.ConfigState{Indent: " ", SortKeys: true, DisableMethods: true, SpewKeys: true}
	printer.Fprintf(hasher, "%#v", *template)
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		hasher.Write(b)
	}
	return rand.SafeEncodeString(fmt.Sprint(hasher.Sum32()))
}

type field struct {
	Name   string `json:"name"`             // as spew prints it (embedded: the type's name)
	Type   string `json:"type"`             // key into types
	JSON   string `json:"json,omitempty"`   // encoding/json's name; "" when json skips it
	Inline bool   `json:"inline,omitempty"` // an embedded struct json promotes the fields of
}

type typeInfo struct {
	Name        string  `json:"name"` // reflect.Type.String(): what spew prints
	Kind        string  `json:"kind"`
	Elem        string  `json:"elem,omitempty"`
	Key         string  `json:"key,omitempty"`
	Len         int     `json:"len,omitempty"`
	Fields      []field `json:"fields,omitempty"`
	Unmarshaler bool    `json:"unmarshaler,omitempty"` // *T implements json.Unmarshaler or TextUnmarshaler
}

var (
	jsonUnmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
)

func key(t reflect.Type) string {
	if t.Name() != "" {
		if t.PkgPath() == "" {
			return t.Name()
		}
		return t.PkgPath() + "." + t.Name()
	}
	switch t.Kind() {
	case reflect.Ptr:
		return "*" + key(t.Elem())
	case reflect.Slice:
		return "[]" + key(t.Elem())
	case reflect.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), key(t.Elem()))
	case reflect.Map:
		return "map[" + key(t.Key()) + "]" + key(t.Elem())
	}
	return t.String()
}

func walk(t reflect.Type, types map[string]typeInfo) string {
	k := key(t)
	if _, ok := types[k]; ok {
		return k
	}
	info := typeInfo{Name: t.String(), Kind: t.Kind().String()}
	pt := reflect.PointerTo(t)
	info.Unmarshaler = t.Kind() != reflect.Ptr && (pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler))
	types[k] = info // placeholder against cycles
	switch t.Kind() {
	case reflect.Ptr, reflect.Slice, reflect.Array:
		info.Elem = walk(t.Elem(), types)
		if t.Kind() == reflect.Array {
			info.Len = t.Len()
		}
	case reflect.Map:
		info.Key = walk(t.Key(), types)
		info.Elem = walk(t.Elem(), types)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			fi := field{Name: f.Name, Type: walk(f.Type, types)}
			tag := f.Tag.Get("json")
			name, _, _ := strings.Cut(tag, ",")
			ft := f.Type
			if ft.Kind() == reflect.Ptr {
				ft = ft.Elem()
			}
			switch {
			case tag == "-":
			case f.Anonymous && name == "" && ft.Kind() == reflect.Struct:
				fi.Inline = true
			case !f.IsExported():
			case name != "":
				fi.JSON = name
			default:
				fi.JSON = f.Name
			}
			info.Fields = append(info.Fields, fi)
		}
	case reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		panic("unsupported kind in PodTemplateSpec: " + t.String())
	}
	types[k] = info
	return k
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gohash schema | gohash hash FILE... | gohash text FILE...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "schema":
		types := map[string]typeInfo{}
		root := walk(reflect.TypeOf(v1.PodTemplateSpec{}), types)
		keys := make([]string, 0, len(types))
		for k := range types {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		fmt.Fprintf(&b, "{\n  \"root\": %q,\n  \"types\": {", root)
		for i, k := range keys {
			v, _ := json.Marshal(types[k])
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(&b, "%s\n    %q: %s", sep, k, v)
		}
		b.WriteString("\n  }\n}\n")
		os.Stdout.WriteString(b.String())
	case "hash", "text":
		for _, path := range os.Args[2:] {
			data, err := os.ReadFile(path)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			var template v1.PodTemplateSpec
			if err := json.Unmarshal(data, &template); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
				os.Exit(1)
			}
			if os.Args[1] == "text" {
				printer := spew.ConfigState{Indent: " ", SortKeys: true, DisableMethods: true, SpewKeys: true}
				printer.Fprintf(os.Stdout, "%#v\n", template)
				continue
			}
			fmt.Println(computeHash(&template, nil))
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown command", os.Args[1])
		os.Exit(2)
	}
}
