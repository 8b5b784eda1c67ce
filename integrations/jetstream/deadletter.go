package jetstreamretry

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/retrykit/retrykit/budget"
)

// The headers of a dead-lettered message, beside the original's own
// headers (kept, except a Nats-Msg-Id, which would deduplicate the copy
// against the original's stream window):
const (
	HeaderStream   = "Retrykit-Stream"        // the stream the message came from
	HeaderSequence = "Retrykit-Sequence"      // its sequence in that stream
	HeaderSubject  = "Retrykit-Subject"       // the subject it was published on
	HeaderAttempt  = "Retrykit-Attempt"       // the attempt that ended it (the delivery count)
	HeaderReason   = "Retrykit-Reason"        // why: handler_code, non_retryable, exhausted, total_timeout or no_time_left
	HeaderError    = "Retrykit-Error"         // the final error's message (at most MaxErrorLen bytes)
	HeaderType     = "Retrykit-Error-Type"    // the final error's OJS type, when it has one
	HeaderHistory  = "Retrykit-Error-History" // the failed attempts' errors this process saw, as JSON
	HeaderCut      = "Retrykit-Cut"           // what was cut for the copy to fit, when anything was (see fitCopy)
	HeaderDataSize = "Retrykit-Data-Size"     // the original data's size in bytes, when the data was cut
)

// ErrDeadLetterTooLarge is matched (errors.Is) by the error of a
// dead-letter copy that cannot be made to fit the server's max_payload
// (or the dead-letter stream's max_msg_size) even with its data, history
// and error message cut: the original's own headers alone are too large.
// The original message is then not terminated (see [Plugin.Process]).
var ErrDeadLetterTooLarge = errors.New("jetstreamretry: dead-letter copy too large")

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
	if out.Budget != budget.ReasonPolicy {
		h.Set(HeaderReason, out.Budget.String())
	} else {
		h.Set(HeaderReason, out.Decision.Reason.String())
	}
	if out.Err != nil {
		h.Set(HeaderError, cut(out.Err.Error(), MaxErrorLen))
	}
	if out.ErrorType != "" {
		h.Set(HeaderType, cut(out.ErrorType, MaxErrorLen))
	}
	return h
}

// publishDeadLetter publishes a copy of msg with its error headers to the
// dead-letter subject and waits for the stream's acknowledgement. A copy
// larger than the connection's max_payload is cut to fit it first
// ([fitCopy]); one the dead-letter stream refuses as larger than its
// max_msg_size is cut to that and published once more.
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
	limit := int64(-1)
	if nc := p.dl.Conn(); nc != nil {
		limit = nc.MaxPayload()
	}
	ch, data, err := fitCopy(h, msg.Data(), limit)
	if err != nil {
		return err
	}
	_, err = p.dl.PublishMsg(ctx, &nats.Msg{Subject: p.dlSubject, Data: data, Header: ch})
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum {
		name, serr := p.dl.StreamNameBySubject(ctx, p.dlSubject)
		if serr != nil {
			return errors.Join(err, serr)
		}
		s, serr := p.dl.Stream(ctx, name)
		if serr != nil {
			return errors.Join(err, serr)
		}
		if lim := int64(s.CachedInfo().Config.MaxMsgSize); lim > 0 && (limit < 0 || lim < limit) {
			if ch, data, err = fitCopy(h, msg.Data(), lim); err != nil {
				return err
			}
			_, err = p.dl.PublishMsg(ctx, &nats.Msg{Subject: p.dlSubject, Data: data, Header: ch})
		}
	}
	return err
}

// fitCopy returns the headers h and data of a dead-letter copy cut to at
// most limit bytes as NATS counts them (data plus encoded headers); a
// negative limit means none. Copies that fit are returned unchanged;
// otherwise these are cut, in order, until the copy fits:
//
//  1. the error history ([HeaderHistory]) is dropped;
//  2. the data is cut to the room left (its first bytes are kept, not
//     necessarily at a UTF-8 boundary) and [HeaderDataSize] gives its
//     original size;
//  3. the final error's message ([HeaderError]) is shortened, or dropped.
//
// [HeaderCut] lists what was cut ("history", "data", "error", comma
// separated). Every other header, the original's included, is kept. When
// they alone do not fit, the error matches [ErrDeadLetterTooLarge].
func fitCopy(h nats.Header, data []byte, limit int64) (nats.Header, []byte, error) {
	if limit < 0 || headerSize(h)+int64(len(data)) <= limit {
		return h, data, nil
	}
	c := nats.Header{}
	for k, v := range h {
		c[k] = v
	}
	var parts []string
	mark := func(what string) { parts = append(parts, what); c.Set(HeaderCut, strings.Join(parts, ",")) }
	if c.Get(HeaderHistory) != "" {
		c.Del(HeaderHistory)
		mark("history")
		if headerSize(c)+int64(len(data)) <= limit {
			return c, data, nil
		}
	}
	mark("data")
	c.Set(HeaderDataSize, strconv.Itoa(len(data)))
	if room := limit - headerSize(c); room >= 0 {
		return c, data[:min(room, int64(len(data)))], nil
	}
	if e := c.Get(HeaderError); e != "" {
		c.Del(HeaderError)
		mark("error")
		room := limit - headerSize(c) - int64(len(HeaderError)+4)
		if room >= 0 {
			if e = cut(e, int(min(room, int64(len(e))))); e != "" {
				c.Set(HeaderError, e)
			}
			return c, nil, nil
		}
		if headerSize(c) <= limit {
			return c, nil, nil
		}
	}
	return nil, nil, fmt.Errorf("%w: its headers alone take %d bytes, over the %d-byte limit", ErrDeadLetterTooLarge, headerSize(c), limit)
}

// headerSize is the size of h encoded as NATS sends it ("NATS/1.0\r\n",
// "Key: value\r\n" per value, "\r\n"), an upper bound (the client trims
// values).
func headerSize(h nats.Header) int64 {
	if len(h) == 0 {
		return 0
	}
	n := int64(len("NATS/1.0\r\n\r\n"))
	for k, vs := range h {
		for _, v := range vs {
			n += int64(len(k) + len(v) + 4)
		}
	}
	return n
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
