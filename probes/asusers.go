package probes

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// UserReport is one user's run of a plan inside a run container.
type UserReport struct {
	User   string  `json:"user"`            // as asked: "1000:1000" or a name
	UID    int     `json:"uid"`             // as resolved
	GID    int     `json:"gid"`             //
	Error  string  `json:"error,omitempty"` // e.g. no such user
	Report *Report `json:"report,omitempty"`
}

// MultiReport is what `probe --as …` prints: one report per user, the
// report of root's plan run as the exec's own user (when one was given),
// and whether the copied files were removed (Error says why not).
type MultiReport struct {
	Users     []UserReport `json:"users"`
	Root      *Report      `json:"root,omitempty"`
	RootError string       `json:"root_error,omitempty"`
	Removed   bool         `json:"removed"`
	Error     string       `json:"error,omitempty"`
	// Then is the report of the second plan (`probe --then-stdin`): the
	// second line carries it, and the removal.
	Then *Report `json:"then,omitempty"`
}

// maxUserReport bounds what a child run may print.
const maxUserReport = 4 << 20

// RunAs runs the plan at planFile once per user, each time in a child
// process of this same executable with that user's uid and gid (and no
// supplementary groups), as the agent and the task scripts would run. Users
// are "uid:gid" or names looked up in passwdPath. It must run as root.
func RunAs(ctx context.Context, exe, planFile string, users []string, passwdPath string) MultiReport {
	var m MultiReport
	var names map[string]PasswdEntry
	// Read once: every user runs the same plan, on a thread where its
	// kinds allow (an unreadable plan goes to the children, which say so).
	var plan *Plan
	if data, err := ReadPlanFile(planFile); err == nil {
		if p, err := parsePlan(data); err == nil {
			plan = &p
		}
	}
	for _, u := range users {
		ur := UserReport{User: u}
		uid, gid, err := parseUser(u)
		if err != nil {
			if names == nil {
				names = readPasswd(passwdPath)
			}
			e, ok := names[u]
			if !ok {
				ur.Error = "no such user"
				m.Users = append(m.Users, ur)
				continue
			}
			uid, gid = e.UID, e.GID
		}
		ur.UID, ur.GID = uid, gid
		rep, err := runAsUser(ctx, exe, planFile, plan, uid, gid)
		if err != nil {
			ur.Error = clip(err.Error())
		} else {
			ur.Report = &rep
		}
		m.Users = append(m.Users, ur)
	}
	return m
}

// runAsUser runs the plan as uid:gid on a thread of this process where its
// kinds allow, else in a child process.
func runAsUser(ctx context.Context, exe, planFile string, plan *Plan, uid, gid int) (Report, error) {
	if plan != nil {
		if rep, ok, err := runOnThreadAs(ctx, *plan, uid, gid); ok {
			return rep, err
		}
	}
	return runChild(ctx, exe, planFile, uid, gid)
}

func parseUser(u string) (int, int, error) {
	a, b, ok := strings.Cut(u, ":")
	if !ok {
		return 0, 0, fmt.Errorf("not uid:gid")
	}
	uid, err1 := strconv.ParseUint(a, 10, 31)
	gid, err2 := strconv.ParseUint(b, 10, 31)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("not uid:gid")
	}
	return int(uid), int(gid), nil
}

func readPasswd(path string) map[string]PasswdEntry {
	f, err := os.Open(path)
	if err != nil {
		return map[string]PasswdEntry{}
	}
	defer f.Close()
	m, err := ParsePasswd(f, 1<<20)
	if err != nil {
		return map[string]PasswdEntry{}
	}
	return m
}

// childCommand runs the plan as uid:gid with no supplementary groups: the
// exec as root carries root's (group 0 among them), which the agent has not.
func childCommand(ctx context.Context, exe, planFile string, uid, gid int) *exec.Cmd {
	cmd := exec.CommandContext(ctx, exe, "probe", "--plan", planFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	return cmd
}

func runChild(ctx context.Context, exe, planFile string, uid, gid int) (Report, error) {
	cmd := childCommand(ctx, exe, planFile, uid, gid)
	var out bytes.Buffer
	cmd.Stdout = NewLimitWriter(&out, maxUserReport+1)
	cmd.Stderr = io.Discard
	if err := cmd.Run(); err != nil {
		return Report{}, fmt.Errorf("probe as %d:%d: %w", uid, gid, err)
	}
	return ParseReport(&out, maxUserReport)
}

// WriteMulti prints a MultiReport as one JSON line.
func WriteMulti(w io.Writer, m MultiReport) error {
	if m.Users == nil {
		m.Users = []UserReport{}
	}
	return json.NewEncoder(w).Encode(m)
}

// ParseMultiReport reads what `probe --as …` printed (at most max bytes),
// strictly, validating each user's report as ParseReport does.
func ParseMultiReport(r io.Reader, max int64) (MultiReport, error) {
	var m MultiReport
	data, err := ReadAtMost(r, max)
	if err != nil {
		return m, fmt.Errorf("report: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("report: %w", err)
	}
	if dec.More() {
		return m, fmt.Errorf("report: trailing data")
	}
	for i, u := range m.Users {
		if u.Report == nil {
			continue
		}
		rep, err := revalidate(*u.Report, max)
		if err != nil {
			return m, fmt.Errorf("report of %s: %w", u.User, err)
		}
		m.Users[i].Report = &rep
	}
	for _, r := range []**Report{&m.Root, &m.Then} {
		if *r == nil {
			continue
		}
		rep, err := revalidate(**r, max)
		if err != nil {
			return m, fmt.Errorf("root's report: %w", err)
		}
		*r = &rep
	}
	return m, nil
}

// revalidate puts an embedded report through ParseReport's checks.
func revalidate(r Report, max int64) (Report, error) {
	b, _ := json.Marshal(r)
	return ParseReport(bytes.NewReader(b), max)
}
