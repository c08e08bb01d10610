// Command mkimage writes a FROM-scratch image of one static binary as a
// docker-archive tarball, for `ctr images import` into the test cluster's
// containerd: nothing is pulled, every image is built here.
//
//	mkimage -o pause.tar -ref sba.local/pause:1 -path pause BINARY [ENTRYPOINT ARG...]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/ssebench-audit/ssebench-audit/images"
)

func main() {
	out := flag.String("o", "", "the tarball to write")
	ref := flag.String("ref", "", "the image's reference")
	path := flag.String("path", "", "where the binary goes in the image (default: its name)")
	flag.Parse()
	if *out == "" || *ref == "" || flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: mkimage -o FILE -ref REF [-path NAME] BINARY [ENTRYPOINT ARG...]")
		os.Exit(2)
	}
	if err := run(*out, *ref, *path, flag.Arg(0), flag.Args()[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func run(out, ref, path, binary string, args []string) error {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	if path == "" {
		path = baseName(binary)
	}
	img, err := images.FromBinary(bin, path, append([]string{"/" + path}, args...), nil)
	if err != nil {
		return err
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	return tarball.WriteToFile(out, tag, img)
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}
