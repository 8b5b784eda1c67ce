package retrykit_test

import (
	"go/ast"
	"go/build"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// modulePath is the main module's import path.
const modulePath = "github.com/retrykit/retrykit"

// docLink matches a doc link's text: [Name], [Name.Sel] or
// [pkg.Name.Sel], with an optional leading *. go/doc sees one only after a
// space, punctuation or the start of the text and before one or the end
// (see linkBoundary).
var docLink = regexp.MustCompile(`\[(\*?[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,2})\]`)

// linkBoundary reports whether the rune r may stand next to a doc link.
func linkBoundary(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }

// TestDocLinks resolves every doc link in every doc comment of the main
// module's packages (nested modules and test files excluded) against the
// symbols that really exist: [Name] in the package itself, [T.M] a method
// or field of its type T, [pkg.Name] and [pkg.T.M] in an imported package
// (by its name in the package's imports, or a top-level standard package,
// as go/doc resolves them), [import/path.Name] in that package. `go doc`
// renders a link that names nothing as plain text, so such a link is dead;
// this test lists them. A bracketed name whose last element is not
// exported ("[eE]" in a regular expression) is taken as plain text.
func TestDocLinks(t *testing.T) {
	std := stdByName(t)
	syms := map[string]map[string]bool{} // import path -> symbols
	symbols := func(importPath string) map[string]bool {
		if s, ok := syms[importPath]; ok {
			return s
		}
		var dir string
		if rel, ok := strings.CutPrefix(importPath, modulePath); ok {
			dir = "." + rel
		} else if p, err := build.Default.Import(importPath, "", build.FindOnly); err == nil && p.Goroot {
			dir = p.Dir
		} else if !strings.Contains(strings.Split(importPath, "/")[0], ".") {
			dir = "" // looks like a standard package, and there is none
		} else {
			syms[importPath] = nil // outside the module and the standard library: not checked
			return nil
		}
		if dir == "" || !exists(dir) {
			syms[importPath] = map[string]bool{}
			return syms[importPath]
		}
		files, _ := parseDir(t, dir, 0)
		s := exported(files)
		syms[importPath] = s
		return s
	}

	var dead []string
	checked := 0
	err := filepath.WalkDir(".", func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if dir != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || exists(filepath.Join(dir, "go.mod"))) {
			return filepath.SkipDir
		}
		files, fset := parseDir(t, dir, parser.ParseComments)
		if len(files) == 0 {
			return nil
		}
		importPath := modulePath
		if dir != "." {
			importPath += "/" + filepath.ToSlash(dir)
		}
		own := symbols(importPath)
		imports := map[string]string{}
		for _, f := range files {
			for _, im := range f.Imports {
				p, _ := strconv.Unquote(im.Path.Value)
				n := path.Base(p)
				if v := strings.TrimPrefix(n, "v"); n != v && isDigits(v) { // .../v2
					n = path.Base(path.Dir(p))
				}
				if im.Name != nil {
					n = im.Name.Name
				}
				imports[n] = p
			}
		}
		for _, f := range files {
			for _, cg := range docComments(f) {
				for _, m := range links(cg.Text()) {
					checked++
					if !resolves(m, own, imports, std, symbols) {
						dead = append(dead, fset.Position(cg.Pos()).String()+": ["+m+"]")
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(dead)
	for _, d := range dead {
		t.Errorf("dead doc link %s", d)
	}
	if checked < 100 {
		t.Errorf("only %d doc links checked: the scan is broken", checked)
	}
}

// resolves reports whether the doc link m names a real symbol.
func resolves(m string, own map[string]bool, imports, std map[string]string, symbols func(string) map[string]bool) bool {
	if p, name, ok := strings.Cut(m, "#"); ok {
		s := symbols(p)
		if name == "" { // a package link
			return s == nil || len(s) > 0
		}
		return s == nil || s[name]
	}
	m = strings.TrimPrefix(m, "*")
	if own[m] || (!strings.Contains(m, ".") && isPredeclared(m)) {
		return true
	}
	pkg, sym, ok := strings.Cut(m, ".")
	if !ok {
		return false
	}
	p, ok := imports[pkg]
	if !ok {
		if p, ok = std[pkg]; !ok {
			return false
		}
	}
	s := symbols(p)
	return s == nil || s[sym]
}

// links returns the doc links in a comment's text, as go/doc/comment
// parses it (so code blocks are skipped and list items are not): the links
// it resolved by themselves, to a full import path or a top-level standard
// package, as "importpath#Name" ("importpath#" for a package link), and
// every bracketed name left as plain text because nothing was looked up.
func links(text string) []string {
	p := comment.Parser{
		LookupPackage: func(string) (string, bool) { return "", false },
		LookupSym:     func(string, string) bool { return false },
	}
	var out []string
	var walk func([]comment.Text)
	walk = func(ts []comment.Text) {
		for _, t := range ts {
			switch t := t.(type) {
			case comment.Plain:
				text := string(t)
				for _, m := range docLink.FindAllStringSubmatchIndex(text, -1) {
					before, _ := utf8.DecodeLastRuneInString(text[:m[0]])
					after, _ := utf8.DecodeRuneInString(text[m[1]:])
					name := text[m[2]:m[3]]
					last, _ := utf8.DecodeRuneInString(name[strings.LastIndex(name, ".")+1:])
					// Only exported names link; "[eE]" in a regular
					// expression is not meant as a link.
					if unicode.IsUpper(last) && (m[0] == 0 || linkBoundary(before)) && (m[1] == len(text) || linkBoundary(after)) {
						out = append(out, name)
					}
				}
			case *comment.DocLink:
				name := t.Name
				if t.Recv != "" {
					name = t.Recv + "." + name
				}
				out = append(out, t.ImportPath+"#"+name)
			case *comment.Link:
				walk(t.Text)
			case comment.Italic:
			}
		}
	}
	var blocks func([]comment.Block)
	blocks = func(bs []comment.Block) {
		for _, b := range bs {
			switch b := b.(type) {
			case *comment.Paragraph:
				walk(b.Text)
			case *comment.Heading:
				walk(b.Text)
			case *comment.List:
				for _, it := range b.Items {
					blocks(it.Content)
				}
			}
		}
	}
	blocks(p.Parse(text).Content)
	return out
}

// docComments returns the doc comments of f: the package doc and those of
// its declarations, specs and struct fields.
func docComments(f *ast.File) []*ast.CommentGroup {
	var out []*ast.CommentGroup
	add := func(cg *ast.CommentGroup) {
		if cg != nil {
			out = append(out, cg)
		}
	}
	add(f.Doc)
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GenDecl:
			add(n.Doc)
		case *ast.FuncDecl:
			add(n.Doc)
		case *ast.TypeSpec:
			add(n.Doc)
		case *ast.ValueSpec:
			add(n.Doc)
		case *ast.Field:
			add(n.Doc)
		}
		return true
	})
	return out
}

// parseDir parses the non-test Go files of dir that the default build
// context would compile.
func parseDir(t *testing.T, dir string, mode parser.Mode) ([]*ast.File, *token.FileSet) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		if ok, _ := build.Default.MatchFile(dir, n); !ok {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, mode)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name == "main" && mode == 0 {
			continue
		}
		files = append(files, f)
	}
	return files, fset
}

// exported returns the exported top-level names of files and, as "T.M",
// the exported methods and struct fields of their types.
func exported(files []*ast.File) map[string]bool {
	s := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					s[d.Name.Name] = true
					continue
				}
				typ := d.Recv.List[0].Type
				for {
					switch x := typ.(type) {
					case *ast.StarExpr:
						typ = x.X
						continue
					case *ast.IndexExpr:
						typ = x.X
						continue
					case *ast.IndexListExpr:
						typ = x.X
						continue
					}
					break
				}
				if id, ok := typ.(*ast.Ident); ok {
					s[id.Name+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							s[n.Name] = true
						}
					case *ast.TypeSpec:
						s[sp.Name.Name] = true
						var fields *ast.FieldList
						switch x := sp.Type.(type) {
						case *ast.StructType:
							fields = x.Fields
						case *ast.InterfaceType:
							fields = x.Methods
						}
						if fields == nil {
							continue
						}
						for _, fl := range fields.List {
							for _, n := range fl.Names {
								s[sp.Name.Name+"."+n.Name] = true
							}
							if len(fl.Names) == 0 { // embedded: its name is the type's
								e := fl.Type
								if st, ok := e.(*ast.StarExpr); ok {
									e = st.X
								}
								switch x := e.(type) {
								case *ast.Ident:
									s[sp.Name.Name+"."+x.Name] = true
								case *ast.SelectorExpr:
									s[sp.Name.Name+"."+x.Sel.Name] = true
								}
							}
						}
					}
				}
			}
		}
	}
	for k := range s { // only exported names link
		if r := []rune(k[strings.LastIndex(k, ".")+1:]); !unicode.IsUpper(r[0]) {
			delete(s, k)
		}
	}
	return s
}

// stdByName maps the top-level standard library packages ("errors",
// "time") to themselves: go/doc resolves [errors.Is] in a package that
// does not import errors, but not [json.Marshal].
func stdByName(t *testing.T) map[string]string {
	root := filepath.Join(build.Default.GOROOT, "src")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if n := e.Name(); e.IsDir() && n != "cmd" && n != "internal" && n != "vendor" && n != "testdata" {
			out[n] = n
		}
	}
	if len(out) < 20 {
		t.Fatalf("found %d standard packages under %s", len(out), root)
	}
	return out
}

func isPredeclared(s string) bool {
	switch s {
	case "any", "bool", "byte", "comparable", "complex64", "complex128", "error", "float32", "float64",
		"int", "int8", "int16", "int32", "int64", "rune", "string", "uint", "uint8", "uint16", "uint32",
		"uint64", "uintptr", "nil", "true", "false", "iota", "append", "cap", "clear", "close", "complex",
		"copy", "delete", "imag", "len", "make", "max", "min", "new", "panic", "print", "println", "real", "recover":
		return true
	}
	return false
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
