package probes

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "resolv.conf")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestReadNameservers(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []string
		wantErr bool
	}{
		{"docker embedded resolver", "nameserver 127.0.0.11\noptions ndots:0\n", []string{"127.0.0.11"}, false},
		{"order kept", "nameserver 10.0.0.2\nnameserver 10.0.0.3\n", []string{"10.0.0.2", "10.0.0.3"}, false},
		{"comments and search", "# Generated\n; old\nsearch example.org\nnameserver 1.1.1.1 # primary\n", []string{"1.1.1.1"}, false},
		{"commented out", "#nameserver 9.9.9.9\n;nameserver 8.8.8.8\nnameserver 8.8.4.4\n", []string{"8.8.4.4"}, false},
		{"tabs and CRLF", "nameserver\t192.0.2.53\r\n", []string{"192.0.2.53"}, false},
		{"ipv6 and zone", "nameserver 2001:db8::1\nnameserver fe80::1%eth0\n", []string{"2001:db8::1", "fe80::1%eth0"}, false},
		{"invalid entries skipped", "nameserver\nnameserver dns.example\nnameserver 300.1.1.1\nnameservers 1.2.3.4\nnameserver 192.0.2.1\n", []string{"192.0.2.1"}, false},
		{"comment glued to the address (as glibc)", "nameserver 192.0.2.5;x\nnameserver 192.0.2.6#y\n", []string{"192.0.2.5", "192.0.2.6"}, false},
		{"indented", "   nameserver 192.0.2.7\n", []string{"192.0.2.7"}, false},
		{"none", "search example.org\n", nil, true},
		{"empty", "", nil, true},
		{"only past the read bound", strings.Repeat("#", maxResolvConf) + "\nnameserver 192.0.2.9\n", nil, true},
		{"very long line before", strings.Repeat("x", 1000) + "\nnameserver 192.0.2.8\n", []string{"192.0.2.8"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readNameservers(writeTemp(t, tt.content))
			if tt.wantErr {
				assert.ErrorIs(t, err, errNoNameserver)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestReadNameserversMissingFile(t *testing.T) {
	_, err := readNameservers(filepath.Join(t.TempDir(), "absent"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func FuzzReadNameservers(f *testing.F) {
	for _, s := range []string{
		"nameserver 127.0.0.11\noptions ndots:0\n",
		"nameserver fe80::1%eth0\nnameserver ::1\n",
		"# c\n;c\nnameserver\t1.2.3.4 ; x\r\n",
		"nameserver 1.2.3.4.5\nnameserver \x00\xff\n",
		"",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "resolv.conf")
		require.NoError(t, os.WriteFile(p, data, 0o644))
		got, err := readNameservers(p)
		if err != nil {
			require.ErrorIs(t, err, errNoNameserver)
			return
		}
		require.NotEmpty(t, got)
		for _, a := range got {
			_, perr := netip.ParseAddr(a)
			require.NoError(t, perr, "returned %q", a)
		}
	})
}
