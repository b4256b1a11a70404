// Command kubectl-maintenance is the kubectl plugin for safe node maintenance ("kubectl
// maintenance"). main only sets up signals, the logger and the exit-code mapping; the
// commands live in package cli.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	_ "k8s.io/client-go/plugin/pkg/client/auth" // cloud auth providers in kubeconfigs
	"k8s.io/klog/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli"
)

func main() {
	os.Exit(run())
}

func run() int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupted := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		close(interrupted)
		fmt.Fprintln(os.Stderr, "interrupted: finishing calls in flight (press Ctrl-C again to exit at once)")
		cancel()
		<-sigs
		os.Exit(cli.ExitInterrupted)
	}()
	defer klog.Flush()
	// A Ctrl-C typed into the live progress view (raw terminal: no SIGINT) interrupts the
	// same way, without sending a signal, so this works on every OS.
	ctx = cli.WithInterrupt(ctx, func() {
		select {
		case sigs <- os.Interrupt:
		default:
		}
	})

	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	root := cli.NewRootCmd(streams)
	err := root.ExecuteContext(ctx)
	select {
	case <-interrupted:
		if err != nil || ctx.Err() != nil {
			return cli.ExitInterrupted
		}
	default:
	}
	if err != nil {
		cli.PrintError(streams.ErrOut, err)
	}
	return cli.ExitCode(err)
}
