package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ssebench-audit/ssebench-audit/backend/docker"
	"github.com/ssebench-audit/ssebench-audit/images"
)

// newProbeImageCmd moves the probe image to hosts that cannot build it.
func newProbeImageCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "probe-image",
		Short: "Build, save or load the probe image (for air-gapped hosts), or push it to a registry (for clusters)",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "build",
		Short: "Build the probe image from this executable and print its reference",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			api, err := dockerClient()
			if err != nil {
				return err
			}
			defer api.Close()
			ref, _, err := docker.EnsureProbeImage(cmd.Context(), api, "")
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), ref)
			return nil
		},
	}, &cobra.Command{
		Use:   "save FILE",
		Short: "Write the probe image as a tarball (docker save format)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			api, err := dockerClient()
			if err != nil {
				return err
			}
			defer api.Close()
			ref, _, err := docker.EnsureProbeImage(cmd.Context(), api, "")
			if err != nil {
				return err
			}
			rc, err := api.ImageSave(cmd.Context(), []string{ref})
			if err != nil {
				return err
			}
			defer rc.Close()
			tmp := args[0] + ".partial"
			f, err := os.Create(tmp)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, rc)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(tmp)
				return err
			}
			if err := os.Rename(tmp, args[0]); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), ref)
			return nil
		},
	}, &cobra.Command{
		Use:   "load FILE",
		Short: "Load a probe image tarball written by save",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			api, err := dockerClient()
			if err != nil {
				return err
			}
			defer api.Close()
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			resp, err := api.ImageLoad(cmd.Context(), f)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			return printLoad(cmd.OutOrStdout(), resp.Body)
		},
	}, newProbeImagePushCmd())
	return cmd
}

// newProbeImagePushCmd puts the probe image in a registry, for clusters:
// made from the probe binary without a Docker engine, pushed with the
// credentials `docker login` left.
func newProbeImagePushCmd() *cobra.Command {
	var insecure bool
	cmd := &cobra.Command{
		Use:   "push REF",
		Short: "Push the probe image to a registry (for a cluster to pull; no Docker engine needed) and print it by digest",
		Example: "  ssebench-audit probe-image push registry.example.com/tools/ssebench-audit-probe:1.4\n" +
			"  docker pull registry.example.com/tools/ssebench-audit-probe@sha256:… \\\n" +
			"    && ssebench-audit audit --probe-image registry.example.com/tools/ssebench-audit-probe@sha256:…",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			bin, err := images.ReadProbeExecutable("")
			if err != nil {
				return err
			}
			img, err := images.OCIProbeImage(bin, map[string]string{docker.LabelProbe: "image"})
			if err != nil {
				return err
			}
			ref, err := images.Push(cmd.Context(), img, args[0], insecure)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), ref)
			return nil
		},
	}
	cmd.Flags().BoolVar(&insecure, "insecure", false, "speak plain HTTP to a registry that is not on loopback")
	return cmd
}

// printLoad turns the engine's JSON message stream of a load into plain
// lines, and its error message into the command's error.
func printLoad(w io.Writer, r io.Reader) error {
	dec := json.NewDecoder(io.LimitReader(r, 1<<20))
	loaded := false
	for {
		var msg struct {
			Stream      string `json:"stream"`
			ErrorDetail *struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&msg); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("reading the engine's answer: %w", err)
		}
		if msg.ErrorDetail != nil {
			return fmt.Errorf("loading the probe image: %s", msg.ErrorDetail.Message)
		}
		if s := strings.TrimSpace(msg.Stream); s != "" {
			fmt.Fprintln(w, s)
			loaded = true
		}
	}
	if !loaded {
		return errors.New("the engine loaded no image from this file")
	}
	return nil
}
