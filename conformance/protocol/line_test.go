package protocol

import (
	"bufio"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

func TestReadLineLimit(t *testing.T) {
	exact := strings.Repeat("x", MaxLineBytes-1) + "\n" // the newline makes MaxLineBytes
	over := strings.Repeat("x", MaxLineBytes) + "\n"
	for _, tc := range []struct {
		name, in string
		want     int // length of the line, -1 for the too-long error
	}{
		{"at the limit", exact, MaxLineBytes - 1},
		{"at the limit with CR", strings.Repeat("x", MaxLineBytes-2) + "\r\n", MaxLineBytes - 2},
		{"one byte over", over, -1},
		{"last line without newline", "abc", 3},
	} {
		br := bufio.NewReaderSize(strings.NewReader(tc.in), 64<<10)
		line, _, err := readLine(br, nil)
		switch {
		case tc.want < 0 && !errors.Is(err, errLineTooLong):
			t.Errorf("%s: err %v, want the line limit", tc.name, err)
		case tc.want >= 0 && (len(line) != tc.want || err != nil && !errors.Is(err, io.EOF)):
			t.Errorf("%s: line of %d bytes, err %v; want %d bytes", tc.name, len(line), err, tc.want)
		}
	}
	if got := errLineTooLong.Error(); got != "answer line longer than the protocol's limit of 1 MiB (1048576 bytes, newline included)" {
		t.Errorf("message %q", got)
	}
}

// TestReadLineBoundedMemory reads a 64 MiB line without a newline (a
// hostile answer) and counts the bytes allocated: the reader stops at the
// limit, so the cost is that of one 1 MiB buffer, not of the line.
func TestReadLineBoundedMemory(t *testing.T) {
	br := bufio.NewReaderSize(io.LimitReader(repeatReader('x'), 64<<20), 64<<10)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := readLine(br, nil)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errLineTooLong) {
		t.Fatalf("err %v", err)
	}
	// One buffer of the limit's size, a little slack.
	if n := after.TotalAlloc - before.TotalAlloc; n > MaxLineBytes+64<<10 {
		t.Errorf("reading a 64 MiB line allocated %d bytes", n)
	}
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// TestStderrTailBounded writes 1 MiB of standard error a byte at a time and
// then in one piece: the tail keeps the last 64 KiB, and the bytes moved
// stay proportional to the bytes written (no 64 KiB move per byte).
func TestStderrTailBounded(t *testing.T) {
	tb := &tailBuffer{limit: 64 << 10}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < 1<<20; i++ {
		if n, err := tb.Write([]byte{byte('a' + i%26)}); n != 1 || err != nil {
			t.Fatal(n, err)
		}
	}
	runtime.ReadMemStats(&after)
	got := tb.String()
	if !strings.HasPrefix(got, "…") || len(got) != len("…")+64<<10 {
		t.Fatalf("tail of %d bytes", len(got))
	}
	if got[len(got)-1] != byte('a'+(1<<20-1)%26) {
		t.Errorf("tail does not end with the last byte written")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2<<20 {
		t.Errorf("1 MiB of single-byte writes allocated %d bytes", alloc)
	}
	big := strings.Repeat("z", 1<<20)
	if n, _ := tb.Write([]byte(big)); n != len(big) {
		t.Errorf("Write returned %d for %d bytes", n, len(big))
	}
	if got := tb.String(); got != "…"+big[:64<<10] {
		t.Errorf("tail after a large write: %d bytes", len(got))
	}
}
