package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ssebench-audit/ssebench-audit/backend/docker"
	"github.com/ssebench-audit/ssebench-audit/backend/kubernetes"
)

func newCleanupCmd() *cobra.Command {
	var auditID, project string
	var images bool
	var bf backendFlags
	cmd := &cobra.Command{
		Use:   "cleanup",
		Short: "Remove what crashed audits left: probe containers (by label) and files copied into runs; on Kubernetes, probe pods and their plans and policies",
		Example: "  ssebench-audit cleanup\n" +
			"  ssebench-audit cleanup --backend kubernetes --namespace ssebench-runs",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bf.validate(); err != nil {
				return err
			}
			if bf.choose(cmd.Context()) == backendKubernetes {
				return cleanupCluster(cmd, &bf, auditID)
			}
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
	cmd.Flags().StringVar(&bf.name, "backend", backendAuto, "docker, kubernetes or auto (as audit)")
	cmd.Flags().StringVar(&bf.k8s.Kubeconfig, "kubeconfig", "", "Kubernetes: the kubeconfig")
	cmd.Flags().StringVar(&bf.k8s.Context, "context", "", "Kubernetes: the kubeconfig context")
	cmd.Flags().StringVar(&bf.k8s.Namespace, "namespace", "", "Kubernetes: the runs' namespace (default $"+kubernetes.EnvNamespace+", else the context's)")
	return cmd
}

// cleanupCluster deletes what audits left in a cluster's runs' namespace.
func cleanupCluster(cmd *cobra.Command, bf *backendFlags, auditID string) error {
	opts, api, err := kubernetes.Config(bf.k8s)
	if err != nil {
		return err
	}
	b, err := kubernetes.New(api, opts)
	if err != nil {
		return err
	}
	// As on Docker: it runs to its end even after Ctrl-C.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(cmd.Context()), 2*time.Minute)
	defer cancel()
	n, err := b.Sweep(ctx, auditID)
	fmt.Fprintf(cmd.OutOrStdout(), "removed %d probe pods, plans and policies in %s\n", n, opts.Namespace)
	return err
}
