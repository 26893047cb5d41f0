package gen

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Temporary folders that gen makes (WritePackage's staging folder and the
// old package it moves aside) and the harness's build module (TrackTempDir) are tracked
// while they exist, so that a command interrupted by a signal can remove
// them (RemoveTempDirs) instead of leaving up to a model's weights behind.
// A folder left by a process that was killed outright is removed by the
// next WritePackage to the same place (removeStale).

var temps struct {
	sync.Mutex
	dirs map[string]string // folder -> where to restore it ("" to remove)
}

// trackTemp records dir; restore, when set, is where dir goes back to if
// the process is interrupted while restore does not exist (the old package
// moved aside during a swap).
func trackTemp(dir, restore string) {
	temps.Lock()
	defer temps.Unlock()
	if temps.dirs == nil {
		temps.dirs = map[string]string{}
	}
	temps.dirs[dir] = restore
}

// TrackTempDir records a temporary folder another package made (the
// harness's build module) so that RemoveTempDirs removes it too.
func TrackTempDir(dir string) { trackTemp(dir, "") }

// UntrackTempDir forgets a folder TrackTempDir recorded (it was removed).
func UntrackTempDir(dir string) { untrackTemp(dir) }

func untrackTemp(dir string) {
	temps.Lock()
	defer temps.Unlock()
	delete(temps.dirs, dir)
}

// RemoveTempDirs removes every temporary folder gen made that still
// exists, and moves an old package that was set aside back into place. It
// is for a signal handler: call it, then exit.
func RemoveTempDirs() {
	temps.Lock()
	defer temps.Unlock()
	for dir, restore := range temps.dirs {
		if restore != "" {
			if _, err := os.Lstat(restore); os.IsNotExist(err) {
				if os.Rename(dir, restore) == nil {
					continue
				}
			}
		}
		os.RemoveAll(dir)
	}
	temps.dirs = nil
}

// staleAge is how old a staging folder must be before another compile
// takes it for the leftover of a killed one: WritePackage fills its
// staging folder in one go, so a live one is seconds old.
const staleAge = 10 * time.Minute

// removeStale removes the staging folders (".base.tmp-*") a killed
// WritePackage left next to dir, and handles its set-aside old packages
// (".base.old-*"): restored when dir is missing, else removed.
func removeStale(parent, base string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	dir := filepath.Join(parent, base)
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() {
			continue
		}
		path := filepath.Join(parent, name)
		switch {
		case strings.HasPrefix(name, "."+base+".tmp-"):
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleAge {
				os.RemoveAll(path)
			}
		case strings.HasPrefix(name, "."+base+".old-"):
			// Its mtime is the old package's, so its age says nothing.
			if _, err := os.Lstat(dir); os.IsNotExist(err) {
				os.Rename(path, dir)
				continue
			}
			os.RemoveAll(path)
		}
	}
}
