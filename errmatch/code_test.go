package errmatch

import (
	"errors"
	"testing"
)

func TestParseCode(t *testing.T) {
	ok := []struct {
		in   string
		want Code
	}{
		{"", CodeRetry},
		{"RETRY", CodeRetry},
		{"DISCARD", CodeDiscard},
		{"DEAD_LETTER", CodeDeadLetter},
		{"FAIL", CodeFail},
	}
	for _, c := range ok {
		got, err := ParseCode(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseCode(%q) = %q, %v; want %q, nil", c.in, got, err, c.want)
		}
	}
	bad := []string{"retry", "Retry", " RETRY", "RETRY ", "DEADLETTER", "DEAD-LETTER", "dead_letter", "FAILED", "ACK", "\x00", "RETRY\x00"}
	for _, in := range bad {
		got, err := ParseCode(in)
		if err == nil {
			t.Errorf("ParseCode(%q) = %q, nil; want error", in, got)
			continue
		}
		if got != "" {
			t.Errorf("ParseCode(%q) returned code %q with its error, want \"\"", in, got)
		}
		if !errors.Is(err, ErrUnknownCode) {
			t.Errorf("ParseCode(%q) error %v does not match ErrUnknownCode", in, err)
		}
	}
}

func TestParseCodeMessage(t *testing.T) {
	_, err := ParseCode("retry")
	want := `errmatch: unknown handler code "retry" (want RETRY, DISCARD, DEAD_LETTER or FAIL)`
	if err == nil || err.Error() != want {
		t.Errorf("ParseCode(\"retry\") error = %v, want %q", err, want)
	}
}

func TestCodeConstants(t *testing.T) {
	// The wire spellings of OJS section 7.1.
	for code, want := range map[Code]string{CodeRetry: "RETRY", CodeDiscard: "DISCARD", CodeDeadLetter: "DEAD_LETTER", CodeFail: "FAIL"} {
		if string(code) != want {
			t.Errorf("constant = %q, want %q", code, want)
		}
	}
}
