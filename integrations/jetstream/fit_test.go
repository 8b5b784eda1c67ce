package jetstreamretry

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"pgregory.net/rapid"
)

// Property: a dead-letter copy cut by fitCopy fits the limit (or the error
// is ErrDeadLetterTooLarge, and then the original's own headers do not fit);
// a copy that fits is unchanged; a cut copy keeps a prefix of the data,
// every header but the history and error message, names what was cut, and
// gives the original data size when the data was cut.
func TestPropFitCopy(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := nats.Header{}
		h.Set("Tenant", strings.Repeat("t", rapid.IntRange(0, 3000).Draw(t, "tenant")))
		h.Set(HeaderStream, "WORK")
		if rapid.Bool().Draw(t, "history") {
			h.Set(HeaderHistory, `[{"attempt":1,"error":"`+strings.Repeat("e", rapid.IntRange(0, 2000).Draw(t, "hist"))+`"}]`)
		}
		if rapid.Bool().Draw(t, "error") {
			h.Set(HeaderError, strings.Repeat("é", rapid.IntRange(1, 2000).Draw(t, "err")))
		}
		data := bytes.Repeat([]byte{'d'}, rapid.IntRange(0, 20000).Draw(t, "data"))
		limit := int64(rapid.IntRange(0, 20000).Draw(t, "limit"))
		ch, cd, err := fitCopy(h, data, limit)
		if err != nil {
			if !errors.Is(err, ErrDeadLetterTooLarge) {
				t.Fatalf("error %v", err)
			}
			own := nats.Header{"Tenant": h["Tenant"], HeaderStream: h[HeaderStream]}
			if headerSize(own) <= limit-int64(len(HeaderCut)+len(HeaderDataSize)+40) {
				t.Fatalf("refused although the kept headers take %d of %d bytes", headerSize(own), limit)
			}
			return
		}
		size := headerSize(ch) + int64(len(cd))
		if size > limit {
			t.Fatalf("copy of %d bytes over the limit %d", size, limit)
		}
		if headerSize(h)+int64(len(data)) <= limit {
			if ch.Get(HeaderCut) != "" || len(cd) != len(data) {
				t.Fatalf("a copy that fits was changed")
			}
			return
		}
		if !bytes.HasPrefix(data, cd) || ch.Get("Tenant") != h.Get("Tenant") || ch.Get(HeaderStream) != "WORK" {
			t.Fatalf("kept data or headers changed")
		}
		cut := ch.Get(HeaderCut)
		if cut == "" {
			t.Fatalf("cut copy without %s", HeaderCut)
		}
		if len(cd) < len(data) && (!strings.Contains(cut, "data") || ch.Get(HeaderDataSize) != strconv.Itoa(len(data))) {
			t.Fatalf("data cut to %d of %d, headers %s=%q %s=%q", len(cd), len(data), HeaderCut, cut, HeaderDataSize, ch.Get(HeaderDataSize))
		}
		if e := ch.Get(HeaderError); e != h.Get(HeaderError) && (!strings.Contains(cut, "error") || !strings.HasPrefix(h.Get(HeaderError), e)) {
			t.Fatalf("error message %q changed without being named as cut", e)
		}
	})
}
