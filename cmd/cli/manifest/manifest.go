// Package manifest reads what a command's -f arguments name, as kubectl apply -f does:
// a file, a directory (its .yaml, .yml and .json files, not recursive, by name) or - for
// stdin (once). Every source is read before the caller decodes anything, so one bad
// argument changes nothing. It never calls the API.
package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Each calls fn with each source of files in order ("-" is stdin, named "stdin"), and
// stops at the first error, fn's or its own. Its errors name the argument at fault, kind
// naming what the files hold ("read pool file: ..."): a file or directory that cannot be
// read, a directory without manifests, stdin given twice.
func Each(files []string, stdin io.Reader, kind string, fn func(name string, r io.Reader) error) error {
	stdinRead := false
	for _, f := range files {
		var paths []string
		switch st, err := os.Stat(f); {
		case f == "-":
			if stdinRead {
				return errors.New("-f - given twice: stdin can be read once")
			}
			stdinRead = true
			if err := fn("stdin", stdin); err != nil {
				return err
			}
			continue
		case err != nil:
			return fmt.Errorf("read %s file: %v", kind, err)
		case st.IsDir():
			entries, err := os.ReadDir(f)
			if err != nil {
				return fmt.Errorf("read %s directory: %v", kind, err)
			}
			for _, e := range entries {
				if ext := strings.ToLower(filepath.Ext(e.Name())); !e.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
					paths = append(paths, filepath.Join(f, e.Name()))
				}
			}
			sort.Strings(paths)
			if len(paths) == 0 {
				return fmt.Errorf("no .yaml, .yml or .json file in directory %s", f)
			}
		default:
			paths = []string{f}
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("read %s file: %v", kind, err)
			}
			if err := fn(p, bytes.NewReader(b)); err != nil {
				return err
			}
		}
	}
	return nil
}
