package cuvil

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestProgress drives the progress line with a fake clock: nothing shows
// before the delay, each new phase rewrites the line after it, a repeated
// phase writes nothing, and stop clears the line.
func TestProgress(t *testing.T) {
	line := func(s string) string { return fmt.Sprintf("\rcuvil: %-40s", s) }
	blank := "\r" + strings.Repeat(" ", 48) + "\r"
	for _, tc := range []struct {
		name string
		run  func(p *progress, advance func(time.Duration))
		want string
	}{
		{"fast compile", func(p *progress, advance func(time.Duration)) {
			p.phase("loading", 0)
			advance(time.Second)
			p.phase("generating", 65)
			p.done()
		}, ""},
		{"slow compile", func(p *progress, advance func(time.Duration)) {
			p.phase("loading", 0)
			advance(2 * time.Second)
			p.phase("running passes", 20)
			p.phase("running passes", 20)
			p.show() // a tick with nothing new
			p.phase("generating", 65)
			p.done()
		}, line("running passes (20%)") + line("generating (65%)") + line("done (100%)") + blank},
		{"tick during a long phase", func(p *progress, advance func(time.Duration)) {
			p.phase("running passes", 20)
			p.show()
			advance(1500 * time.Millisecond)
			p.show()
			p.show()
		}, line("running passes (20%)") + blank},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			now := time.Unix(1000, 0)
			p := newProgress(&buf, 1500*time.Millisecond, func() time.Time { return now })
			tc.run(p, func(d time.Duration) { now = now.Add(d) })
			p.stop()
			if got := buf.String(); got != tc.want {
				t.Errorf("progress wrote %q, want %q", got, tc.want)
			}
		})
	}

	// A nil writer (no Progress option) and a nil progress (Load) do nothing.
	p := startProgress(nil)
	p.phase("loading", 0)
	p.stop()
	var none *progress
	none.phase("loading", 0)
	none.stop()
}
