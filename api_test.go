package mcprt

import (
	"encoding/json"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The root package's exported API, and every type a host can reach from
// it (fields, methods, parameters and results, followed into the module's
// other packages), never shows a protoactor type: a host depends on mcprt,
// not on the actor library under it.
func TestNoProtoactorInTheAPI(t *testing.T) {
	pkg := typeCheckedRoot(t)
	seen := map[types.Type]bool{}
	var bad []string
	var walk func(typ types.Type, at string)
	walk = func(typ types.Type, at string) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		switch x := typ.(type) {
		case *types.Named:
			obj := x.Obj()
			if obj.Pkg() == nil {
				return
			}
			path := obj.Pkg().Path()
			if strings.HasPrefix(path, modProtoactor) {
				bad = append(bad, at+": "+path+"."+obj.Name())
				return
			}
			if !strings.HasPrefix(path, module) {
				return // the standard library and other modules end the walk
			}
			for i := 0; i < x.NumMethods(); i++ {
				if m := x.Method(i); m.Exported() {
					walk(m.Type(), at+"."+m.Name())
				}
			}
			for i := 0; i < x.TypeArgs().Len(); i++ {
				walk(x.TypeArgs().At(i), at)
			}
			walk(x.Underlying(), at)
		case *types.Alias:
			walk(types.Unalias(x), at)
		case *types.Pointer:
			walk(x.Elem(), at)
		case *types.Slice:
			walk(x.Elem(), at)
		case *types.Array:
			walk(x.Elem(), at)
		case *types.Map:
			walk(x.Key(), at)
			walk(x.Elem(), at)
		case *types.Chan:
			walk(x.Elem(), at)
		case *types.Signature:
			for _, tup := range []*types.Tuple{x.Params(), x.Results()} {
				for i := 0; i < tup.Len(); i++ {
					walk(tup.At(i).Type(), at)
				}
			}
		case *types.Struct:
			for i := 0; i < x.NumFields(); i++ {
				if f := x.Field(i); f.Exported() || f.Embedded() {
					walk(f.Type(), at+"."+f.Name())
				}
			}
		case *types.Interface:
			for i := 0; i < x.NumMethods(); i++ {
				if m := x.Method(i); m.Exported() {
					walk(m.Type(), at+"."+m.Name())
				}
			}
		}
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		walk(obj.Type(), name)
		if tn, ok := obj.(*types.TypeName); ok {
			if n, ok := types.Unalias(tn.Type()).(*types.Named); ok {
				ptr := types.NewPointer(n)
				ms := types.NewMethodSet(ptr)
				for i := 0; i < ms.Len(); i++ {
					if m := ms.At(i).Obj(); m.Exported() {
						walk(m.Type(), name+"."+m.Name())
					}
				}
			}
		}
	}
	if len(seen) < 50 {
		t.Fatalf("the walk saw only %d types: it does not walk the API", len(seen))
	}
	if len(bad) > 0 {
		t.Errorf("protoactor types in mcprt's API:\n%s", strings.Join(bad, "\n"))
	}
}

// typeCheckedRoot loads the root package's types from the build's export
// data (go list -export).
func typeCheckedRoot(t *testing.T) *types.Package {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Export", ".").Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})
	pkg, err := imp.Import(module)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}
