package jetstreamretry

import (
	"context"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The headers of a dead-lettered message, beside the original's own
// headers (kept, except a Nats-Msg-Id, which would deduplicate the copy
// against the original's stream window):
const (
	HeaderStream   = "Retrykit-Stream"        // the stream the message came from
	HeaderSequence = "Retrykit-Sequence"      // its sequence in that stream
	HeaderSubject  = "Retrykit-Subject"       // the subject it was published on
	HeaderAttempt  = "Retrykit-Attempt"       // the attempt that ended it (the delivery count)
	HeaderReason   = "Retrykit-Reason"        // why: handler_code, non_retryable or exhausted
	HeaderError    = "Retrykit-Error"         // the final error's message (at most MaxErrorLen bytes)
	HeaderType     = "Retrykit-Error-Type"    // the final error's OJS type, when it has one
	HeaderHistory  = "Retrykit-Error-History" // the failed attempts' errors this process saw, as JSON
)

// MaxErrorLen bounds the error message written in a dead-letter header; a
// longer one is cut at a UTF-8 boundary.
const MaxErrorLen = 4 << 10

// DeadLetterHeaders returns the headers the plugin adds to the copy of msg
// it dead-letters after out (the constants above).
func DeadLetterHeaders(md *jetstream.MsgMetadata, subject string, out Outcome) nats.Header {
	h := nats.Header{}
	h.Set(HeaderStream, md.Stream)
	h.Set(HeaderSequence, strconv.FormatUint(md.Sequence.Stream, 10))
	h.Set(HeaderSubject, subject)
	h.Set(HeaderAttempt, strconv.Itoa(out.Attempt))
	h.Set(HeaderReason, out.Decision.Reason.String())
	if out.Err != nil {
		h.Set(HeaderError, cut(out.Err.Error(), MaxErrorLen))
	}
	if out.ErrorType != "" {
		h.Set(HeaderType, cut(out.ErrorType, MaxErrorLen))
	}
	return h
}

// publishDeadLetter publishes a copy of msg with its error headers to the
// dead-letter subject and waits for the stream's acknowledgement.
func (p *Plugin) publishDeadLetter(ctx context.Context, msg jetstream.Msg, md *jetstream.MsgMetadata, out Outcome) error {
	h := nats.Header{}
	for k, v := range msg.Headers() {
		if k == nats.MsgIdHdr {
			continue
		}
		h[k] = append([]string(nil), v...)
	}
	for k, v := range DeadLetterHeaders(md, msg.Subject(), out) {
		h[k] = v
	}
	if hist := p.hist.peek(keyOf(md)); len(hist) > 0 {
		h.Set(HeaderHistory, hist.json())
	}
	_, err := p.dl.PublishMsg(ctx, &nats.Msg{Subject: p.dlSubject, Data: msg.Data(), Header: h})
	return err
}

// cut returns s as one line of valid UTF-8 (a header value: invalid bytes
// become U+FFFD, line breaks spaces) of at most n bytes, cut at a rune
// boundary.
func cut(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	s = strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}
