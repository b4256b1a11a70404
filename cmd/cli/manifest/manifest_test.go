package manifest

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEachReadsFilesDirectoriesAndStdinInOrder(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b.yaml", "a.yml", "c.json", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	err := Each([]string{"-", dir}, strings.NewReader("in"), "pool", func(name string, r io.Reader) error {
		b, _ := io.ReadAll(r)
		got = append(got, filepath.Base(name)+"="+string(b))
		return nil
	})
	want := []string{"stdin=in", "a.yml=a.yml", "b.yaml=b.yaml", "c.json=c.json"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	for args, msg := range map[string]string{
		"- -":                             "-f - given twice: stdin can be read once",
		filepath.Join(dir, "nosuch.yaml"): "read pool file: ",
		t.TempDir():                       "no .yaml, .yml or .json file in directory ",
	} {
		err := Each(strings.Fields(args), strings.NewReader(""), "pool", func(string, io.Reader) error { return nil })
		if err == nil || !strings.HasPrefix(err.Error(), msg) {
			t.Errorf("-f %s: %v, want %q", args, err, msg)
		}
	}
}
