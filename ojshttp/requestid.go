package ojshttp

import (
	"net/http"
	"regexp"
	"time"
)

// maxRequestIDLen bounds a client's X-Request-Id that is echoed.
const maxRequestIDLen = 128

// requestIDPattern is a sane client request id: 1 to 128 characters of
// letters, digits and "._:-+=/@~", starting with a letter or digit. It
// admits UUIDs, the binding's req_… form, W3C trace ids and ULIDs, and
// keeps out spaces, quotes, control characters and anything else that
// breaks a log line or a header echoed into another system (RK-283).
var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:+=/@~-]{0,127}$`)

// requestID is the X-Request-Id of r's answer (the binding §19): the
// client's own when it sent exactly one and it is sane, otherwise a new
// req_<UUIDv7>.
func requestID(r *http.Request) string {
	if v := r.Header.Values("X-Request-Id"); len(v) == 1 && len(v[0]) <= maxRequestIDLen && requestIDPattern.MatchString(v[0]) {
		return v[0]
	}
	return "req_" + newUUIDv7(time.Now().UnixMilli())
}
