package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ssebench-audit/ssebench-audit/backend/docker"
)

func newCleanupCmd() *cobra.Command {
	var auditID, project string
	var images bool
	cmd := &cobra.Command{
		Use:   "cleanup",
		Short: "Remove what crashed audits left: probe containers (by label) and files copied into runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			api, err := dockerClient()
			if err != nil {
				return err
			}
			defer api.Close()
			b := docker.New(api, docker.Options{})
			// Cleanup runs to its end even after Ctrl-C: half a sweep helps no one.
			ctx, cancel := context.WithTimeout(context.WithoutCancel(cmd.Context()), 2*time.Minute)
			defer cancel()
			var n int
			if project != "" {
				n, err = b.SweepProject(ctx, project)
			} else {
				n, err = b.Sweep(ctx, auditID)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %d probe containers\n", n)
			if err != nil {
				return err
			}
			var projects []string
			if project != "" {
				projects = []string{project}
			}
			n, err = b.SweepCopies(ctx, projects, auditID)
			fmt.Fprintf(cmd.OutOrStdout(), "removed %d files copied into runs\n", n)
			if err != nil || !images {
				return err
			}
			n, err = docker.RemoveProbeImages(ctx, api)
			fmt.Fprintf(cmd.OutOrStdout(), "removed %d probe images\n", n)
			return err
		},
	}
	cmd.Flags().StringVar(&auditID, "audit-id", "", "remove only the probes of this audit")
	cmd.Flags().StringVar(&project, "project", "", "remove only the probes of audits of this project")
	cmd.MarkFlagsMutuallyExclusive("audit-id", "project")
	cmd.Flags().BoolVar(&images, "images", false, "also remove the probe images (kept between audits as a cache)")
	return cmd
}
