#!/bin/sh
# rss-after-new.sh MODEL.onnx [CUVIL] [embed|file]: compiles MODEL with CUVIL
# (default: ./cmd/cuvil, built here) into a throwaway module, builds a program
# that loads it and prints the process's VmRSS (from /proc/self/status,
# Linux) before New, after New (NewFromFile with file), after NewSession and
# after the first Run, next to the size of weights.bin, and how long New
# took (wall time). docs/performance.md records its figures for resnet50.
set -e
model=$(realpath "$1")
cuvil=${2:-}
mode=${3:-embed}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/rss.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -z "$cuvil" ]; then
	(cd "$repo" && go build -o "$work/cuvil" ./cmd/cuvil)
	cuvil=$work/cuvil
fi
mkdir -p "$work/mod"
printf 'module rss\n\ngo 1.24\n' >"$work/mod/go.mod"
if [ "$mode" = file ]; then
	"$cuvil" compile -model "$model" -pkg m -out "$work/mod/m" -weights file
	load='m.NewFromFile("m/weights.bin")'
else
	"$cuvil" compile -model "$model" -pkg m -out "$work/mod/m"
	load='m.New()'
fi
mkdir -p "$work/mod/cmd"
cat >"$work/mod/cmd/main.go" <<GO
package main

import (
	"bufio"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"time"

	"rss/m"
)

func rss() string {
	f, _ := os.Open("/proc/self/status")
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), "VmRSS:") {
			return strings.TrimSpace(strings.TrimPrefix(s.Text(), "VmRSS:"))
		}
	}
	return "?"
}

func main() {
	st, err := os.Stat("m/weights.bin")
	if err != nil {
		panic(err)
	}
	runtime.GC()
	fmt.Printf("weights.bin: %d kB\n", st.Size()/1024)
	fmt.Printf("VmRSS before New: %s\n", rss())
	start := time.Now()
	model, err := $load
	took := time.Since(start)
	if err != nil {
		panic(err)
	}
	runtime.GC()
	fmt.Printf("VmRSS after New: %s (New took %v)\n", rss(), took)
	s := model.NewSession()
	fmt.Printf("VmRSS after NewSession: %s\n", rss())
	in := m.Input{}
	v := reflect.ValueOf(&in).Elem()
	for i := 0; i < v.NumField(); i++ {
		t := &m.Tensor{}
		t.Resize(m.F32, 1, 3, 224, 224)
		v.Field(i).Set(reflect.ValueOf(t))
	}
	if _, err := s.Run(in); err != nil {
		fmt.Printf("Run: %v (input assumed float [1,3,224,224])\n", err)
	} else {
		fmt.Printf("VmRSS after the first Run: %s\n", rss())
	}
	runtime.KeepAlive(model)
}
GO
(cd "$work/mod" && GOWORK=off GOFLAGS=-buildvcs=false go build -o "$work/rss" ./cmd && cd "$work/mod" && "$work/rss")
