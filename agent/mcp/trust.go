package mcp

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/reika-lsp/reika-lsp/internal/atomicfile"
)

// TrustFile is where the workspaces whose .mcp.json the user trusts are
// remembered, under the state directory.
const TrustFile = "mcp-trust.json"

// KindTrust is the approval kind of the question whether to start a
// workspace's servers. No approve setting answers it: the user does.
const KindTrust = "mcp-trust"

// trustMu serializes this process's reads and writes of trust files.
var trustMu sync.Mutex

// trustEntry is the answer for one workspace: its servers start, or
// (Declined) they never start, while .mcp.json has the hash.
type trustEntry struct {
	SHA256   string    `json:"sha256"`
	At       time.Time `json:"at"`
	Declined bool      `json:"declined,omitempty"`
}

// Trusted reports whether the user trusted root's .mcp.json with the
// given hash (its bytes have not changed since).
func Trusted(stateDir, root, hash string) bool {
	e, ok := answer(stateDir, root, hash)
	return ok && !e.Declined
}

// Declined reports whether the user chose never to start the servers of
// root's .mcp.json with the given hash.
func Declined(stateDir, root, hash string) bool {
	e, ok := answer(stateDir, root, hash)
	return ok && e.Declined
}

func answer(stateDir, root, hash string) (trustEntry, bool) {
	trustMu.Lock()
	defer trustMu.Unlock()
	m, _ := readTrust(stateDir)
	e, ok := m[root]
	return e, ok && e.SHA256 == hash
}

// Trust remembers that the user trusts root's .mcp.json with the given
// hash; a changed file is asked about again.
func Trust(stateDir, root, hash string) error {
	return remember(stateDir, root, trustEntry{SHA256: hash, At: time.Now().UTC()})
}

// Decline remembers that the user does not want the servers of root's
// .mcp.json with the given hash started; a changed file is asked about
// again.
func Decline(stateDir, root, hash string) error {
	return remember(stateDir, root, trustEntry{SHA256: hash, At: time.Now().UTC(), Declined: true})
}

func remember(stateDir, root string, e trustEntry) error {
	trustMu.Lock()
	defer trustMu.Unlock()
	m, err := readTrust(stateDir)
	if err != nil {
		return err
	}
	m[root] = e
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(stateDir, TrustFile), append(data, '\n'))
}

func readTrust(stateDir string) (map[string]trustEntry, error) {
	m := map[string]trustEntry{}
	data, err := os.ReadFile(filepath.Join(stateDir, TrustFile))
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return map[string]trustEntry{}, err
	}
	return m, nil
}
