package progress

import (
	"io"
	"os"

	"k8s.io/klog/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/exitcode"
)

// LogTo sends klog's output, off the screen a view owns, to logFile (--log-file; "":
// discarded) until restore, which flushes it and sends it to errOut again. A file that
// cannot be created is a usage error.
func LogTo(logFile string, errOut io.Writer) (restore func(), err error) {
	logOut := io.Writer(io.Discard)
	closeFile := func() {}
	if logFile != "" {
		f, err := os.Create(logFile)
		if err != nil {
			return nil, exitcode.UsageErrorf("open --log-file: %v", err)
		}
		closeFile = func() { _ = f.Close() }
		logOut = f
	}
	klog.LogToStderr(false)
	klog.SetOutput(logOut)
	return func() {
		klog.Flush()
		klog.SetOutput(errOut)
		klog.LogToStderr(true)
		closeFile()
	}, nil
}
