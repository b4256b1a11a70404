// Package printflags is kubectl's output flags for the commands (cmd/cli): -o,
// --no-headers and --template, built from cli-runtime's print flags and kubectl get's
// custom columns, and the printers they choose. A format it cannot print is a
// *FormatError, which the commands map to the usage exit code.
package printflags

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/get"
)

// Flags are kubectl's output flags (-o, --no-headers, --template), built from
// cli-runtime's print flags and kubectl get's custom columns:
//
//	""/wide                 a table (metav1.Table, printed by cli-runtime's table printer;
//	                        wide shows the columns of priority 1 too)
//	json, yaml              the objects, as a v1 List when there are several
//	name                    kind/name per object
//	jsonpath=, go-template= templates over the objects (and their -file= forms)
//	custom-columns=         kubectl's custom columns over the objects
type Flags struct {
	Format    string
	NoHeaders bool

	jsonYaml *genericclioptions.JSONYamlPrintFlags
	name     *genericclioptions.NamePrintFlags
	template *genericclioptions.KubeTemplatePrintFlags
	columns  *get.CustomColumnsPrintFlags
	// table says whether the command has a table (default and wide formats).
	table bool
}

// New returns the flags; table is false for a command whose default output is not a
// table.
func New(table bool) *Flags {
	return &Flags{jsonYaml: genericclioptions.NewJSONYamlPrintFlags(), name: genericclioptions.NewNamePrintFlags(""),
		template: genericclioptions.NewKubeTemplatePrintFlags(), columns: get.NewCustomColumnsPrintFlags(), table: table}
}

// AllowedFormats lists what -o accepts.
func (f *Flags) AllowedFormats() []string {
	out := []string{}
	if f.table {
		out = append(out, "wide")
	}
	out = append(out, f.jsonYaml.AllowedFormats()...)
	out = append(out, f.name.AllowedFormats()...)
	out = append(out, f.template.AllowedFormats()...)
	return append(out, f.columns.AllowedFormats()...)
}

// AddFlags adds -o, --no-headers and --template to cmd.
func (f *Flags) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.Format, "output", "o", f.Format, fmt.Sprintf("Output format. One of: (%s).", strings.Join(f.AllowedFormats(), ", ")))
	cmd.Flags().BoolVar(&f.NoHeaders, "no-headers", false, "When using the default or custom-column output format, don't print headers.")
	f.template.AddFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("output", func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, s := range f.AllowedFormats() {
			if strings.HasPrefix(s, prefix) {
				out = append(out, s)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// IsTable reports whether the output is the command's own (human) format.
func (f *Flags) IsTable() bool { return f.Format == "" || f.Format == "wide" }

// Validate checks -o before anything is asked of the cluster (a *FormatError).
func (f *Flags) Validate() error {
	if f.IsTable() {
		if !f.table && f.Format == "wide" {
			return &FormatError{fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: %s", f.Format, strings.Join(f.AllowedFormats(), ","))}
		}
		return nil
	}
	if _, err := f.printer(); err != nil {
		return &FormatError{err}
	}
	return nil
}

func (f *Flags) printer() (printers.ResourcePrinter, error) {
	format := f.Format
	if t := f.template.TemplateArgument; t != nil && *t != "" && format == "" {
		format = "go-template"
	}
	f.columns.NoHeaders = f.NoHeaders
	if f.template.TemplateArgument != nil {
		f.columns.TemplateArgument = *f.template.TemplateArgument
	}
	for _, to := range []func(string) (printers.ResourcePrinter, error){f.template.ToPrinter, f.jsonYaml.ToPrinter, f.columns.ToPrinter, f.name.ToPrinter} {
		if p, err := to(format); !genericclioptions.IsNoCompatiblePrinterError(err) {
			return p, err
		}
	}
	return nil, genericclioptions.NoCompatiblePrinterError{OutputFormat: &format, AllowedFormats: f.AllowedFormats()}
}

// Print writes table for the default and wide formats, objs (with their kinds set) for
// every other format.
func (f *Flags) Print(w io.Writer, table *metav1.Table, objs runtime.Object) error {
	if f.IsTable() && table != nil {
		p := printers.NewTablePrinter(printers.PrintOptions{NoHeaders: f.NoHeaders, Wide: f.Format == "wide"})
		return p.PrintObj(table, w)
	}
	p, err := f.printer()
	if err != nil {
		return &FormatError{err}
	}
	if f.Format == "name" && meta.IsListType(objs) { // as kubectl get does: the name printer takes one object
		items, err := meta.ExtractList(objs)
		if err != nil {
			return fmt.Errorf("print: %w", err)
		}
		for _, o := range items {
			if err := p.PrintObj(o, w); err != nil {
				return fmt.Errorf("print: %w", err)
			}
		}
		return nil
	}
	if err := p.PrintObj(objs, w); err != nil {
		return fmt.Errorf("print: %w", err)
	}
	return nil
}

// AsList wraps objects in a v1 List, as kubectl get prints several objects; one object
// named on the command line is printed alone.
func AsList(items []runtime.Object, single bool) runtime.Object {
	if single && len(items) == 1 {
		return items[0]
	}
	l := &metav1.List{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}}
	for _, o := range items {
		l.Items = append(l.Items, runtime.RawExtension{Object: o})
	}
	return l
}

// FormatError is an output format the flags cannot print: the command line's mistake.
type FormatError struct{ Err error }

func (e *FormatError) Error() string { return e.Err.Error() }
func (e *FormatError) Unwrap() error { return e.Err }

// ObjectPrinter is cli-runtime's printer for -o yaml, json or name (a command that
// prints objects, not tables). One YAML printer prints "---" between objects, so the
// objects make one YAML stream.
func ObjectPrinter(format string) (printers.ResourcePrinter, error) {
	p, err := genericclioptions.NewJSONYamlPrintFlags().ToPrinter(format)
	if !genericclioptions.IsNoCompatiblePrinterError(err) {
		return p, err
	}
	p, err = genericclioptions.NewNamePrintFlags("").ToPrinter(format)
	if genericclioptions.IsNoCompatiblePrinterError(err) {
		return nil, &FormatError{fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: json,name,yaml", format)}
	}
	return p, err
}
